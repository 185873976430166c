import { COCO_LABELS, type CocoLabel } from './coco-labels.ts';

/**
 * Parts of the room itself rather than its furnishing: they stay when a room is emptied, and they
 * name it (a toilet or a washbasin a bathroom; an oven, a refrigerator, a microwave or a sink a
 * kitchen). Everything else the detector finds is furnishing.
 */
export const ROOM_FIXTURE_LABELS: ReadonlySet<string> = new Set<CocoLabel>([
  'toilet',
  'sink',
  'oven',
  'refrigerator',
  'microwave',
]);

/** Furniture that defines a room's use: one of these, even half-seen, makes a room furnished. */
const LARGE_FURNITURE: readonly CocoLabel[] = ['chair', 'couch', 'bed', 'dining table', 'bench'];

/**
 * Things a furnished room holds and an empty one does not: furniture, and what stands on it. The
 * detector scores lamps, stools, side cabinets and wardrobes, which COCO lacks, as low-scored chairs,
 * tables, vases, clocks and books; several such classes at once is furnishing.
 */
const FURNISHING_CLASSES: readonly CocoLabel[] = [
  ...LARGE_FURNITURE,
  'tv',
  'potted plant',
  'vase',
  'clock',
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

/** Peak detector score of large furniture at or above which a room is furnished. */
export const LARGE_FURNITURE_MIN_PEAK = 0.2;
/** A furnishing class "is there" from this peak score on (for counting). */
export const FURNISHING_CLASS_MIN_PEAK = 0.1;
/** This many furnishing classes present at once make a room furnished. */
export const FURNISHING_MIN_CLASSES = 6;

const index = (label: CocoLabel): number => COCO_LABELS.indexOf(label);

/** How the furnished/empty decision was reached, from the detector's per-class peaks. */
export interface FurnishingEvidence {
  /** Highest peak among chairs, sofas, beds, tables and benches. */
  largeFurniturePeak: number;
  /** Furnishing classes with a peak of at least FURNISHING_CLASS_MIN_PEAK. */
  furnishingClasses: number;
  furnished: boolean;
}

/**
 * Furnished or empty, from the detector's per-class peak scores (`classMax`): large furniture seen
 * at LARGE_FURNITURE_MIN_PEAK, or FURNISHING_MIN_CLASSES kinds of furnishing at once. The thresholds
 * are below the detector's usual 0.4–0.5 because furniture COCO has no class for is seen only as a
 * faint chair or table; docs/analyzer-model.md has the measurements.
 */
export function furnishingEvidence(classMax: Float32Array): FurnishingEvidence {
  const peak = (label: CocoLabel): number => classMax[index(label)] ?? 0;
  const largeFurniturePeak = Math.max(...LARGE_FURNITURE.map(peak));
  const furnishingClasses = FURNISHING_CLASSES.filter((l) => peak(l) >= FURNISHING_CLASS_MIN_PEAK).length;
  return {
    largeFurniturePeak,
    furnishingClasses,
    furnished: largeFurniturePeak >= LARGE_FURNITURE_MIN_PEAK || furnishingClasses >= FURNISHING_MIN_CLASSES,
  };
}
