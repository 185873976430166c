import type { ImageQuality } from './image-quality.ts';
import type { RoomType, SceneVerdict } from './scene-types.ts';
import { THRESHOLDS, type Thresholds } from './thresholds.ts';

/** The verdict on one image, as the API reports it (without its URL). */
export interface StageabilityDecision {
  isStageable: boolean;
  roomType: RoomType;
  /** Probability that `isStageable` is right. */
  confidence: number;
  /** One sentence a person can act on. */
  details: string;
}

/** Room types that are interiors but not rooms one stages (docs/reference.md §8). */
const UNSTAGEABLE_ROOMS: ReadonlySet<RoomType> = new Set(['corridor', 'staircase', 'closet']);
/** Room types that are not interiors at all. */
const NOT_INTERIOR_ROOMS: ReadonlySet<RoomType> = new Set(['exterior', 'floor_plan', 'other']);

/** One check the image must pass: its sentence when failed, and the probability its verdict is right. */
export interface Gate {
  /** What the gate judges; two gates (mean and clipping) judge each side of the exposure. */
  measure: 'size' | 'aspect' | 'dark' | 'bright' | 'sharpness' | 'person';
  passed: boolean;
  /** Probability that the image truly passes (logistic in the margin to the threshold). */
  passProbability: number;
  failure: string;
  /** Short form for "also …" when another gate already failed. */
  short: string;
}

const logistic = (x: number): number => 1 / (1 + Math.exp(-x));
const round = (value: number, places = 3): number => Math.round(value * 10 ** places) / 10 ** places;

/** "living_room" → "living room", "childs_room" → "child's room". */
export function roomName(roomType: RoomType): string {
  if (roomType === 'childs_room') return "child's room";
  return roomType.replace(/_/g, ' ');
}

/** The quality gates of docs/reference.md §8 in the order a person should fix them, each with its margin. */
export function qualityGates(quality: ImageQuality, t: Thresholds = THRESHOLDS): Gate[] {
  const s = t.confidenceScale;
  const size = `${quality.width}×${quality.height}`;
  const mean = Math.round(quality.meanBrightness);
  const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;
  const sharpnessMargin = Math.log(Math.max(quality.sharpness, 1e-3) / t.minSharpness);
  const gate = (
    measure: Gate['measure'],
    margin: number,
    scale: number,
    failure: string,
    short: string,
  ): Gate => ({
    measure,
    passed: margin >= 0,
    passProbability: logistic(margin / scale),
    failure,
    short,
  });
  return [
    gate(
      'size',
      quality.shortSide - t.minShortSide,
      s.shortSide,
      `Too small: ${size}, the short side must be at least ${t.minShortSide} px`,
      'too small',
    ),
    gate(
      'aspect',
      t.panoramaAspect - quality.aspectRatio - 1e-9,
      s.aspect,
      `Panorama (${round(quality.aspectRatio, 1)}:1, ${size}): wide and 360° panoramas cannot be staged, use a regular photo`,
      'a panorama',
    ),
    gate(
      'dark',
      quality.meanBrightness - t.minMeanBrightness,
      s.brightness,
      `Too dark: mean brightness ${mean}/255`,
      'too dark',
    ),
    gate(
      'dark',
      t.maxDarkClipFraction - quality.darkClipFraction,
      s.clipFraction,
      `Too dark: ${percent(quality.darkClipFraction)} of the picture is black shadow`,
      'too dark',
    ),
    gate(
      'bright',
      t.maxMeanBrightness - quality.meanBrightness,
      s.brightness,
      `Overexposed: mean brightness ${mean}/255`,
      'overexposed',
    ),
    gate(
      'bright',
      t.maxBrightClipFraction - quality.brightClipFraction,
      s.clipFraction,
      `Overexposed: ${percent(quality.brightClipFraction)} of the picture is blown-out white`,
      'overexposed',
    ),
    gate(
      'sharpness',
      sharpnessMargin,
      s.logSharpness,
      `Blurred: sharpness ${Math.round(quality.sharpness)}, at least ${t.minSharpness} is needed`,
      'blurred',
    ),
  ];
}

/** Why the picture is not of a room one stages, when the model says so; exterior and plan first. */
function kindFailure(
  verdict: SceneVerdict,
): { kind: 'exterior' | 'floor_plan' | 'other' | 'unstaged'; sentence: string } | undefined {
  if (verdict.scene === 'exterior' || verdict.roomType === 'exterior') {
    return { kind: 'exterior', sentence: 'Exterior photo: only interior rooms can be staged' };
  }
  if (verdict.scene === 'floor_plan' || verdict.roomType === 'floor_plan') {
    return {
      kind: 'floor_plan',
      sentence: 'Floor plan, not a photo of a room: only room photos can be staged',
    };
  }
  if (verdict.scene === 'other' || verdict.roomType === 'other') {
    return { kind: 'other', sentence: 'Not a photo of a room: only interior room photos can be staged' };
  }
  if (UNSTAGEABLE_ROOMS.has(verdict.roomType)) {
    const name = roomName(verdict.roomType);
    return {
      kind: 'unstaged',
      sentence: `${name[0]!.toUpperCase()}${name.slice(1)}: ${name}s are not staged, use a photo of a room`,
    };
  }
  return undefined;
}

/**
 * Probability that the picture shows a stageable kind of room: interior (scene head) times the
 * share of the interior room mass that is not a corridor, staircase or closet. For an interior of
 * `unknown` type that share is at most 1 − `unknownRoomUnstageableShare`: the model could not tell
 * the room, so it cannot rule out the corridors that views of vacant interiors hold.
 */
function roomKindProbability(verdict: SceneVerdict, t: Thresholds): number {
  let interiorMass = 0;
  let unstageableMass = 0;
  for (const [room, probability = 0] of Object.entries(verdict.roomProbabilities) as [RoomType, number][]) {
    if (NOT_INTERIOR_ROOMS.has(room)) continue;
    interiorMass += probability;
    if (UNSTAGEABLE_ROOMS.has(room)) unstageableMass += probability;
  }
  const modelShare = interiorMass > 0 ? unstageableMass / interiorMass : 0;
  const unstageableShare =
    verdict.roomType === 'unknown' ? Math.max(modelShare, t.unknownRoomUnstageableShare) : modelShare;
  const stageableShare = 1 - unstageableShare;
  return verdict.sceneProbabilities.interior * stageableShare;
}

/**
 * Decides one image (docs/reference.md §8). Stageable = an interior room of a stageable type, every quality
 * gate passed, nobody in frame. `confidence` treats the checks as independent: P(stageable) is the
 * model's probability of a stageable interior times each gate's pass probability (logistic in its
 * margin) times the probability nobody is in frame; the verdict's confidence is P(stageable) for a
 * stageable verdict and 1 − P(stageable) otherwise.
 */
export function decideStageability(
  quality: ImageQuality,
  verdict: SceneVerdict,
  thresholds: Thresholds = THRESHOLDS,
): StageabilityDecision {
  const gates = qualityGates(quality, thresholds);
  const personMargin = thresholds.personScore - verdict.personScore;
  const personGate: Gate = {
    measure: 'person',
    passed: personMargin > 0,
    passProbability: logistic(personMargin / thresholds.confidenceScale.personScore),
    failure: 'Person in frame: staging needs a photo without people',
    short: 'a person is in frame',
  };
  const pStageable =
    roomKindProbability(verdict, thresholds) *
    [...gates, personGate].reduce((p, gate) => p * gate.passProbability, 1);

  const failed = [...gates, personGate].filter((gate) => !gate.passed);
  const failedOn = (measure: Gate['measure']) => failed.find((gate) => gate.measure === measure);
  const said = kindFailure(verdict);
  // Enlarged to the model's input, a picture of a few pixels shows nothing it could recognise; and a
  // room photo too dark to see reads to the model as a blank page. What such a picture shows is not
  // known, and its quality is what a person can act on.
  const unreadable =
    quality.shortSide < thresholds.minModelSide || (said?.kind === 'other' && failedOn('dark') !== undefined);
  const roomType = unreadable ? 'unknown' : verdict.roomType;
  const kind = unreadable ? undefined : said;
  const isStageable = kind === undefined && failed.length === 0;
  const confidence = round(Math.min(0.99, Math.max(0.01, isStageable ? pStageable : 1 - pStageable)));

  // A washed-out photo and a white page measure alike: say both.
  const washedOut = kind?.kind === 'other' ? failedOn('bright') : undefined;
  let details: string;
  if (washedOut !== undefined) {
    details = `${washedOut.failure}, or not a photo of a room at all: only interior room photos can be staged`;
  } else if (kind !== undefined) {
    details = kind.sentence;
  } else if (failed.length > 0) {
    const also = [...new Set(failed.slice(1).map((gate) => gate.short))].filter(
      (s) => s !== failed[0]!.short,
    );
    details = also.length > 0 ? `${failed[0]!.failure}; also ${joinWords(also)}` : failed[0]!.failure;
  } else {
    details = stageableSentence(quality, verdict);
  }
  return { isStageable, roomType, confidence, details };
}

function stageableSentence(quality: ImageQuality, verdict: SceneVerdict): string {
  const room = verdict.roomType === 'unknown' ? 'room (type unclear)' : roomName(verdict.roomType);
  const size = `${quality.width}×${quality.height}`;
  if (verdict.furnished) {
    return `Furnished ${room}, ${size}, sharp and well lit — staging needs furniture removal`;
  }
  return `Empty ${room}, ${size}, sharp and well lit`;
}

function joinWords(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]!}`;
}
