import { ROOM_TYPES, type RoomType, type SceneKind, type SceneVerdict } from '../scene-types.ts';
import { COCO_LABELS, FURNITURE_LABELS, REPORTED_LABELS } from './coco-labels.ts';
import { drawingProbabilities } from './drawing-detector.ts';
import type { ModelFeatures } from './model-features.ts';
import { classifyRoom, type RoomHead } from './room-head.ts';

/** A furniture detection at least this sure makes the room "furnished". */
export const FURNISHED_MIN_SCORE = 0.4;

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
 * Turns the network's features into a verdict: drawings first (pixel statistics), then the scene
 * classifier with fixture evidence for photos, `unknown` when its best room is below the head's
 * calibrated threshold.
 */
export function decideVerdict(head: RoomHead, features: ModelFeatures): SceneVerdict {
  const drawing = drawingProbabilities(features.statistics, features.detections);
  const photo = 1 - drawing.floorPlan - drawing.other;
  const classMax = features.blocks.classMax;
  const heads = applyFixtureEvidence(classifyRoom(head, features), classMax);

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

  const scene = (Object.keys(sceneProbabilities) as SceneKind[]).reduce((best, k) =>
    sceneProbabilities[k] > sceneProbabilities[best] ? k : best,
  );
  let roomType: RoomType;
  let roomConfidence: number;
  if (scene === 'interior') {
    const [best, p] = Object.entries(roomProbabilities)
      .filter(([label]) => !INTERIOR_EXCLUDED.has(label))
      .reduce((a, b) => (b[1] > a[1] ? b : a), ['unknown', 0] as [string, number]);
    roomConfidence = p;
    roomType = p >= head.unknownBelow ? (best as RoomType) : 'unknown';
  } else {
    roomType = scene;
    roomConfidence = sceneProbabilities[scene];
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
    furnished: objects.some((d) => FURNITURE_LABELS.has(d.label) && d.score >= FURNISHED_MIN_SCORE),
    inferenceMs: features.inferenceMs,
  };
}
