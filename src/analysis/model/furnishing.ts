import { COCO_LABELS, type CocoLabel } from './coco-labels.ts';

/**
 * Parts of the room itself rather than its furnishing: they stay when a room is emptied, and they
 * name it (a toilet or a washbasin a bathroom; an oven, a refrigerator, a microwave or a sink a
 * kitchen). They never make a room furnished.
 */
export const ROOM_FIXTURE_LABELS: ReadonlySet<string> = new Set<CocoLabel>([
  'toilet',
  'sink',
  'oven',
  'refrigerator',
  'microwave',
]);

/**
 * Movable furniture the detector has a class for. Stools, wardrobes and side cabinets have none: it
 * scores them as faint chairs or tables, and so it does a tub, a vanity or a kitchen island
 * (0.2–0.3, measured on listing bathrooms and kitchens), which is why one piece must be seen clearly.
 */
const FURNITURE: readonly CocoLabel[] = ['chair', 'couch', 'bed', 'dining table', 'bench'];
/**
 * Seats and beds: two of them seen faintly at once is a furnished room (a wardrobe and an armchair
 * beside a doorway), where one faint table or bench alone is as often a counter or a tub.
 */
const SEATS_AND_BEDS: readonly CocoLabel[] = ['chair', 'couch', 'bed'];
/**
 * Movable things a lived-in room holds and a vacant one does not. Not the clock and tv classes: the
 * detector gives them to thermostats, ceiling lights, range hoods and dark windows, which a vacant
 * room keeps.
 */
const FURNISHING_CLASSES: readonly CocoLabel[] = [
  ...FURNITURE,
  'potted plant',
  'vase',
  'book',
  'teddy bear',
  'laptop',
  'keyboard',
  'mouse',
  'remote',
  'cell phone',
  'toaster',
  'cup',
  'bowl',
  'bottle',
  'wine glass',
  'suitcase',
  'handbag',
];

/** Peak detector score from which one piece of furniture is seen with confidence. */
export const FURNITURE_MIN_PEAK = 0.3;
/** Peak score from which a seat or a bed counts when two of them are seen at once. */
export const FAINT_SEAT_OR_BED_MIN_PEAK = 0.15;
/** A furnishing class "is there" from this peak score on (for counting). */
export const FURNISHING_CLASS_MIN_PEAK = 0.1;
/** This many furnishing classes present at once make a room furnished (a counter of small things). */
export const FURNISHING_MIN_CLASSES = 6;

const index = (label: CocoLabel): number => COCO_LABELS.indexOf(label);

/** How the furnished/empty decision was reached, from the detector's per-class peaks. */
export interface FurnishingEvidence {
  /** Highest peak among chairs, sofas, beds, tables and benches. */
  furniturePeak: number;
  /** Seats and beds with a peak of at least FAINT_SEAT_OR_BED_MIN_PEAK. */
  faintSeatsAndBeds: number;
  /** Furnishing classes with a peak of at least FURNISHING_CLASS_MIN_PEAK. */
  furnishingClasses: number;
  furnished: boolean;
}

/**
 * Furnished or empty, from the detector's per-class peak scores (`classMax`): movable furniture seen
 * with confidence (one piece at FURNITURE_MIN_PEAK, or two seats or beds at
 * FAINT_SEAT_OR_BED_MIN_PEAK), or FURNISHING_MIN_CLASSES kinds of movable things at once. Fixtures
 * (ROOM_FIXTURE_LABELS) and what fixtures look like to the detector never count; docs/analyzer-model.md
 * has the measurements.
 */
export function furnishingEvidence(classMax: Float32Array): FurnishingEvidence {
  const peak = (label: CocoLabel): number => classMax[index(label)] ?? 0;
  const furniturePeak = Math.max(...FURNITURE.map(peak));
  const faintSeatsAndBeds = SEATS_AND_BEDS.filter((l) => peak(l) >= FAINT_SEAT_OR_BED_MIN_PEAK).length;
  const furnishingClasses = FURNISHING_CLASSES.filter((l) => peak(l) >= FURNISHING_CLASS_MIN_PEAK).length;
  return {
    furniturePeak,
    faintSeatsAndBeds,
    furnishingClasses,
    furnished:
      furniturePeak >= FURNITURE_MIN_PEAK ||
      faintSeatsAndBeds >= 2 ||
      furnishingClasses >= FURNISHING_MIN_CLASSES,
  };
}
