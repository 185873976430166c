import { ROOM_TYPES, type RoomType, type SceneKind, type SceneVerdict } from '../scene-types.ts';
import { COCO_LABELS, REPORTED_LABELS } from './coco-labels.ts';
import { drawingProbabilities } from './drawing-detector.ts';
import { nameEmptyRoom } from './empty-room-evidence.ts';
import { furnishingEvidence } from './furnishing.ts';
import type { ModelFeatures } from './model-features.ts';
import { NETWORK_INPUT_SIZE } from './network-input.ts';
import { featureVector, headLogits, type RoomHead, softmax } from './room-head.ts';

/**
 * Fixtures that identify a room even when the scene classifier hesitates (an empty kitchen still has
 * its oven). A detection at `minScore` or more multiplies that room's probability by `factor` before
 * renormalising: evidence added to the classifier's, not a hard override.
 */
export const FIXTURE_EVIDENCE: readonly {
  label: string;
  room: RoomType;
  minScore: number;
  factor: number;
}[] = [
  { label: 'toilet', room: 'bathroom', minScore: 0.5, factor: 4 },
  { label: 'bed', room: 'bedroom', minScore: 0.5, factor: 4 },
  { label: 'oven', room: 'kitchen', minScore: 0.5, factor: 3 },
  { label: 'refrigerator', room: 'kitchen', minScore: 0.5, factor: 3 },
  { label: 'microwave', room: 'kitchen', minScore: 0.5, factor: 2 },
];

/**
 * A room seen without furniture in a picture too small to vouch for that (EMPTY_ROOM_MIN_LONG_SIDE)
 * is named as a furnished one, except that a bathroom or a kitchen needs one of its fixtures seen
 * at EMPTY_FIXTURE_MIN_PEAK: white walls read to the classifier as a bathroom's tiles.
 */
export const EMPTY_ROOM_FIXTURES: Partial<Record<RoomType, readonly string[]>> = {
  bathroom: ['toilet', 'sink'],
  kitchen: ['oven', 'refrigerator', 'microwave', 'sink'],
};
/** Peak detector score at which such a fixture counts as seen. */
export const EMPTY_FIXTURE_MIN_PEAK = 0.2;

/**
 * A room is read as vacant (named only from its fixtures, empty-room-evidence.ts) when no furniture is
 * seen in a picture whose long side is at least this: the network's own input side. A smaller
 * picture reaches the detector enlarged and blurred, and "no furniture seen" there is no evidence of
 * a vacant room: the detector misses the bed in 14 of 120 Places bedrooms at 256 px, and in none of
 * 110 listing bedrooms at 512 px. Such a picture is too small to stage anyway (the quality gate).
 */
export const EMPTY_ROOM_MIN_LONG_SIDE = NETWORK_INPUT_SIZE;

const INTERIOR_EXCLUDED = new Set<string>(['exterior', 'floor_plan', 'other']);
const KNOWN_TYPES = new Set<string>([...ROOM_TYPES, 'other']);

function isRoomType(label: string): label is RoomType {
  return KNOWN_TYPES.has(label);
}

/** Applies fixture evidence to the head's probabilities (renormalised). */
export function applyFixtureEvidence(
  probabilities: Record<string, number>,
  classMax: Float32Array,
): Record<string, number> {
  const out = { ...probabilities };
  for (const rule of FIXTURE_EVIDENCE) {
    const score = classMax[COCO_LABELS.indexOf(rule.label as (typeof COCO_LABELS)[number])] ?? 0;
    if (score >= rule.minScore && out[rule.room] !== undefined) out[rule.room]! *= rule.factor;
  }
  const sum = Object.values(out).reduce((a, b) => a + b, 0);
  for (const key of Object.keys(out)) out[key]! /= sum;
  return out;
}

/**
 * The room of an interior that is not read as vacant, from its probabilities (`rooms`, keyed by
 * label): the most probable room when it reaches the head's `unknownBelow`, else `unknown`. Without
 * furniture seen, a bathroom or a kitchen also needs one of its EMPTY_ROOM_FIXTURES.
 */
export function nameInteriorRoom(
  head: RoomHead,
  rooms: Partial<Record<string, number>>,
  furnished: boolean,
  classMax: Float32Array,
): { roomType: RoomType; p: number } {
  const [best, p] = Object.entries(rooms)
    .filter(([label]) => !INTERIOR_EXCLUDED.has(label))
    .reduce((a, b) => ((b[1] ?? 0) > (a[1] ?? 0) ? b : a), ['unknown', 0]) as [RoomType, number];
  const fixtures = furnished ? undefined : EMPTY_ROOM_FIXTURES[best];
  const fixtureSeen =
    fixtures === undefined ||
    fixtures.some(
      (label) =>
        (classMax[COCO_LABELS.indexOf(label as (typeof COCO_LABELS)[number])] ?? 0) >= EMPTY_FIXTURE_MIN_PEAK,
    );
  return { roomType: fixtureSeen && p >= head.unknownBelow ? best : 'unknown', p };
}

/**
 * Turns the network's features into a verdict: drawings first (pixel statistics), then the scene
 * classifier with fixture evidence for photos. A furnished room is `unknown` when its best room is
 * below the head's calibrated threshold. A vacant room (no furniture seen in a picture large enough
 * to tell) is named only from its fixtures (nameEmptyRoom), the classifier ranking the rooms they
 * allow.
 */
export function decideVerdict(head: RoomHead, features: ModelFeatures): SceneVerdict {
  const drawing = drawingProbabilities(features.statistics, features.detections);
  const photo = 1 - drawing.floorPlan - drawing.other;
  const classMax = features.blocks.classMax;
  const { furnished } = furnishingEvidence(classMax);
  const main = Object.fromEntries(
    softmax(headLogits(head, featureVector(features.blocks, head.blocks)), head.temperature).map(
      (p, k) => [head.labels[k]!, p] as const,
    ),
  );
  const { roomProbabilities, sceneProbabilities } = probabilities(
    applyFixtureEvidence(main, classMax),
    drawing,
    photo,
  );
  const scene = (Object.keys(sceneProbabilities) as SceneKind[]).reduce((best, k) =>
    sceneProbabilities[k] > sceneProbabilities[best] ? k : best,
  );
  let roomType: RoomType;
  let roomConfidence: number;
  if (scene !== 'interior') {
    roomType = scene;
    roomConfidence = sceneProbabilities[scene];
  } else if (!furnished && features.pictureLongSide >= EMPTY_ROOM_MIN_LONG_SIDE) {
    // The classifier's own reading (not raised by fixture evidence): the detector's evidence is
    // weighed by nameEmptyRoom itself.
    const interiorRooms = Object.fromEntries(
      Object.entries(main).filter(([label]) => !INTERIOR_EXCLUDED.has(label) && isRoomType(label)),
    );
    roomType = nameEmptyRoom(interiorRooms, classMax).roomType;
    // As for a furnished room, the probability of the room named, or of the best one when unknown.
    const best = Object.entries(interiorRooms).reduce((a, b) => (b[1] > a[1] ? b : a))[0];
    roomConfidence = photo * main[roomType === 'unknown' ? best : roomType]!;
  } else {
    ({ roomType, p: roomConfidence } = nameInteriorRoom(head, roomProbabilities, furnished, classMax));
  }

  const objects = features.detections.filter((d) => REPORTED_LABELS.has(d.label));
  return {
    roomType,
    roomConfidence,
    roomProbabilities,
    scene,
    sceneProbabilities,
    personScore: classMax[COCO_LABELS.indexOf('person')] ?? 0,
    objects,
    furnished,
    inferenceMs: features.inferenceMs,
  };
}

/** Room and scene-kind probabilities from the head's (a photo's share) and the drawing rule's. */
function probabilities(
  heads: Record<string, number>,
  drawing: { floorPlan: number; other: number },
  photo: number,
) {
  const roomProbabilities: Partial<Record<RoomType, number>> = {};
  const sceneProbabilities: Record<SceneKind, number> = {
    interior: 0,
    exterior: 0,
    floor_plan: drawing.floorPlan,
    other: drawing.other,
  };
  for (const [label, p] of Object.entries(heads)) {
    if (!isRoomType(label)) continue;
    const share = photo * p;
    roomProbabilities[label] = (roomProbabilities[label] ?? 0) + share;
    if (label === 'exterior') sceneProbabilities.exterior += share;
    else if (label === 'floor_plan') sceneProbabilities.floor_plan += share;
    else if (label === 'other') sceneProbabilities.other += share;
    else sceneProbabilities.interior += share;
  }
  roomProbabilities.floor_plan = (roomProbabilities.floor_plan ?? 0) + drawing.floorPlan;
  roomProbabilities.other = (roomProbabilities.other ?? 0) + drawing.other;
  return { roomProbabilities, sceneProbabilities };
}
