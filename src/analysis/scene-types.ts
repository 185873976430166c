/**
 * The boundary between the two halves of the analyzer: the vision model (src/analysis/model/),
 * which says what a picture shows, and the stageability service (the rest of src/analysis/), which
 * fetches, measures quality and decides. Both sides import only these types from each other.
 */

/** Room types an image can be given (docs/reference.md §8), named after Places365 scene categories. */
export const ROOM_TYPES = [
  'living_room',
  'bedroom',
  'dining_room',
  'kitchen',
  'bathroom',
  'home_office',
  'childs_room',
  'nursery',
  'entrance_hall',
  'corridor',
  'staircase',
  'closet',
  'utility_room',
  'basement',
  'attic',
  'garage',
  'home_gym',
  'balcony',
  'patio',
  'exterior',
  'floor_plan',
] as const;

/** Every value `roomType` can take: a room type, `other` (a picture of none of them) or `unknown` (cannot tell). */
export const ROOM_TYPE_VALUES = [...ROOM_TYPES, 'other', 'unknown'] as const;

/** A contract room type, `other` (a picture that is none of them) or `unknown` (cannot tell). */
export type RoomType = (typeof ROOM_TYPE_VALUES)[number];

/** What kind of picture it is, before the room: only `interior` pictures can be staged. */
export const SCENE_KINDS = ['interior', 'exterior', 'floor_plan', 'other'] as const;

export type SceneKind = (typeof SCENE_KINDS)[number];

/**
 * Long side, in px, of the pixels handed to the model (never enlarged). Image quality is measured on
 * the same copy (THRESHOLDS.measureLongSide), so one decode serves both.
 */
export const MODEL_INPUT_LONG_SIDE = 512;

/** Decoded pixels handed to the model: EXIF orientation applied, RGB, long side ≤ MODEL_INPUT_LONG_SIDE. */
export interface RawImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3;
}

/** One object the detector found (COCO label), with its score and its box as fractions of the image. */
export interface DetectedObject {
  label: string;
  score: number;
  box: { x: number; y: number; width: number; height: number };
}

/** The model's reading of one picture. Probabilities are calibrated and sum to 1 within each field. */
export interface SceneVerdict {
  /** Final room type, already `unknown` where the evidence is too weak. */
  roomType: RoomType;
  /** Probability that `roomType` is right (for `unknown`: the best candidate's probability). */
  roomConfidence: number;
  /** Probability per room type the classifier knows (a subset of ROOM_TYPES plus possibly `other`). */
  roomProbabilities: Partial<Record<RoomType, number>>;
  scene: SceneKind;
  sceneProbabilities: Record<SceneKind, number>;
  /** Highest person score in frame (0 when none). */
  personScore: number;
  /** Furniture and fixtures seen (beds, sofas, tables, toilets, ovens…), for "furnished" vs "empty". */
  objects: DetectedObject[];
  furnished: boolean;
  /** Milliseconds the model took (decode excluded). */
  inferenceMs: number;
}

/** The vision model, loaded once; inference runs off the main thread. */
export interface SceneClassifier {
  /** Resolves once the model is loaded and warmed up; readiness waits on it. */
  ready(): Promise<void>;
  isReady(): boolean;
  classify(image: RawImage): Promise<SceneVerdict>;
  close(): Promise<void>;
}
