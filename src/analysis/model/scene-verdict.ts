import { ROOM_TYPES, type RoomType, type SceneKind, type SceneVerdict } from '../scene-types.ts';
import { COCO_LABELS, REPORTED_LABELS } from './coco-labels.ts';
import { drawingProbabilities } from './drawing-detector.ts';
import { furnishingEvidence } from './furnishing.ts';
import type { ModelFeatures } from './model-features.ts';
import { emptyRoomProbabilities } from './empty-room-head.ts';
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
 * Rooms built with fixtures the detector knows: an empty one is named only when one of its fixtures
 * is seen at EMPTY_FIXTURE_MIN_PEAK, whatever the classifier says (an empty bedroom's white walls
 * read to it as a bathroom's tiles). Rooms without such fixtures need the empty-room probability
 * alone to reach their threshold.
 */
export const EMPTY_ROOM_FIXTURES: Partial<Record<RoomType, readonly string[]>> = {
  bathroom: ['toilet', 'sink'],
  kitchen: ['oven', 'refrigerator', 'microwave', 'sink'],
};
/** Peak detector score at which a fixture counts as seen in an empty room. */
export const EMPTY_FIXTURE_MIN_PEAK = 0.2;

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
 * The room of an interior from its probabilities (`rooms`, keyed by label): the most probable room,
 * or `unknown` when the evidence is too weak. A furnished room needs the head's `unknownBelow`; an
 * empty one (probabilities at the empty-room temperature) needs that room's threshold of the
 * empty-room head (`answerAboveByRoom`) and, for a room built with fixtures the detector knows, one of
 * them seen.
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
  if (furnished) return { roomType: p >= head.unknownBelow ? best : 'unknown', p };
  const fixtures = EMPTY_ROOM_FIXTURES[best];
  const fixtureSeen =
    fixtures === undefined ||
    fixtures.some(
      (label) =>
        (classMax[COCO_LABELS.indexOf(label as (typeof COCO_LABELS)[number])] ?? 0) >= EMPTY_FIXTURE_MIN_PEAK,
    );
  const answerAbove = head.emptyRooms
    ? (head.emptyRooms.answerAboveByRoom[best] ?? head.emptyRooms.answerAbove)
    : head.unknownBelow;
  // A threshold of 1 is "never": a probability can round to exactly 1, and must not pass it then.
  const named = fixtureSeen && answerAbove < 1 && p >= answerAbove;
  return { roomType: named ? best : 'unknown', p };
}

/**
 * Turns the network's features into a verdict: drawings first (pixel statistics), then the scene
 * classifier with fixture evidence for photos. A furnished room is `unknown` when its best room is
 * below the head's calibrated threshold. An empty room (furniture is what the main head learned rooms
 * from) is read by the empty-room head together with the main head, and named only on a fixture of
 * the room (where it has some the detector knows) and a probability of at least that room's threshold.
 */
export function decideVerdict(head: RoomHead, features: ModelFeatures): SceneVerdict {
  const drawing = drawingProbabilities(features.statistics, features.detections);
  const photo = 1 - drawing.floorPlan - drawing.other;
  const classMax = features.blocks.classMax;
  const { furnished } = furnishingEvidence(classMax);
  const x = featureVector(features.blocks, head.blocks);
  const mainLogits = headLogits(head, x);
  const main = Object.fromEntries(
    softmax(mainLogits, head.temperature).map((p, k) => [head.labels[k]!, p] as const),
  );

  // The scene kind is always the main head's, so exteriors and plans are decided as before; only the
  // room of an empty interior is read differently.
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
  let rooms = roomProbabilities;
  if (scene === 'interior') {
    if (!furnished && head.emptyRooms) {
      const empty = applyFixtureEvidence(emptyRoomProbabilities(head.emptyRooms, x, mainLogits), classMax);
      rooms = { exterior: sceneProbabilities.exterior, floor_plan: sceneProbabilities.floor_plan };
      if (sceneProbabilities.other > 0) rooms.other = sceneProbabilities.other;
      for (const [label, p] of Object.entries(empty)) {
        if (isRoomType(label)) rooms[label] = sceneProbabilities.interior * p;
      }
    }
    ({ roomType, p: roomConfidence } = nameInteriorRoom(head, rooms, furnished, classMax));
  } else {
    roomType = scene;
    roomConfidence = sceneProbabilities[scene];
  }

  const objects = features.detections.filter((d) => REPORTED_LABELS.has(d.label));
  return {
    roomType,
    roomConfidence,
    roomProbabilities: rooms,
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
