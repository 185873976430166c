import type { RoomType } from '../scene-types.ts';
import { COCO_LABELS, type CocoLabel } from './coco-labels.ts';

/**
 * Naming a vacant room. Its walls, floor and windows do not say what it is used for (an empty bedroom,
 * living room and dining room are the same white box, and the scene classifier, which learned rooms
 * from their furniture, reads that box as a bathroom or a hall at 0.6–0.9), so a vacant room is named
 * only from what it keeps when emptied and what only one kind of room has: a toilet (a bathroom), an
 * oven, refrigerator or built-in microwave (a kitchen), or a sink the classifier places with
 * certainty. Everything else is `unknown`. Each rule was measured on real photos of rooms without
 * furniture (listing bathrooms and kitchens, docs/analyzer-model.md); thresholds fitted on masked
 * furnished photos do not decide here.
 */
export const EMPTY_ROOM_EVIDENCE = {
  /** A toilet at this peak detector score or more is a bathroom... */
  toiletMinPeak: 0.3,
  /** ...an oven, refrigerator or microwave at this score or more is a kitchen appliance... */
  applianceMinPeak: 0.35,
  /**
   * ...which makes a kitchen when the scene classifier also puts kitchen first at this probability:
   * an open-plan living room shows its kitchen at the back (oven 0.44, kitchen 0.57).
   */
  applianceKitchenMin: 0.7,
  /**
   * A sink or basin at this score or more, with the classifier certain of the room (below), names a
   * bathroom or a kitchen: a basin alone does not (kitchens have sinks), but a vanity and a kitchen
   * counter look nothing alike to a classifier fitted on real photos of both.
   */
  sinkMinPeak: 0.35,
  /** The classifier's probability of the sink's room, first among all rooms. */
  sinkRoomMin: 0.9,
  /** A basin makes no bathroom when a kitchen appliance is seen at this score or more. */
  applianceAbsentBelow: 0.3,
} as const;

/** Why a vacant room was named: the detector's evidence, or `null` when the room stays `unknown`. */
export type EmptyRoomReason = 'toilet' | 'appliance' | 'sink' | null;

const peakOf = (classMax: Float32Array, label: CocoLabel): number =>
  classMax[COCO_LABELS.indexOf(label)] ?? 0;

/**
 * The room of a vacant interior, from the detector's per-class peaks (`classMax`) and the scene
 * classifier's probabilities of the interior rooms (`rooms`, from the head fitted on real photos):
 * `bathroom` or `kitchen` when the classifier puts that room first and the detector shows the
 * evidence of EMPTY_ROOM_EVIDENCE, else `unknown`. The classifier only ranks: without the fixture
 * it names nothing, however sure it is.
 */
export function nameEmptyRoom(
  rooms: Readonly<Record<string, number>>,
  classMax: Float32Array,
  rules: typeof EMPTY_ROOM_EVIDENCE = EMPTY_ROOM_EVIDENCE,
): { roomType: RoomType; reason: EmptyRoomReason } {
  const [first, pFirst] = Object.entries(rooms).reduce((a, b) => (b[1] > a[1] ? b : a), ['', -1]);
  const appliance = Math.max(
    peakOf(classMax, 'oven'),
    peakOf(classMax, 'refrigerator'),
    peakOf(classMax, 'microwave'),
  );
  const sink = peakOf(classMax, 'sink') >= rules.sinkMinPeak && pFirst >= rules.sinkRoomMin;
  if (first === 'bathroom') {
    if (peakOf(classMax, 'toilet') >= rules.toiletMinPeak) return { roomType: 'bathroom', reason: 'toilet' };
    if (sink && appliance < rules.applianceAbsentBelow) return { roomType: 'bathroom', reason: 'sink' };
  }
  if (first === 'kitchen') {
    if (appliance >= rules.applianceMinPeak && pFirst >= rules.applianceKitchenMin)
      return { roomType: 'kitchen', reason: 'appliance' };
    if (sink) return { roomType: 'kitchen', reason: 'sink' };
  }
  return { roomType: 'unknown', reason: null };
}
