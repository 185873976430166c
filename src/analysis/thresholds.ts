import { MODEL_INPUT_LONG_SIDE } from './scene-types.ts';

/**
 * Every number the stageability decision depends on, in one place (docs/reference.md §8: "thresholds live in
 * one documented place and are tunable"). Quality is measured on a grey copy whose long side is
 * `measureLongSide` px (smaller images are measured as they are: enlarging would invent blur), so the
 * sharpness figure does not depend on the camera's resolution. docs/analyzer.md explains each gate.
 */
export const THRESHOLDS = {
  /**
   * Long side, in px, of the grey copy sharpness and exposure are measured on: the model's input size,
   * so one decode serves both (another value costs a second decode per image).
   */
  measureLongSide: MODEL_INPUT_LONG_SIDE,

  /** Shortest side, in px, a stageable photo must have: staging renders look soft below it. */
  minShortSide: 512,

  /**
   * Shortest side, in px, below which the model's verdict is not used and the room type is `unknown`:
   * enlarged to its 512 px input, a picture this small shows nothing the model could recognise (a
   * 2×2 px picture was a confident floor plan).
   */
  minModelSide: 32,

  /** Long side / short side at or above which a picture is a (360°) panorama, which staging cannot use. */
  panoramaAspect: 2,

  /**
   * Variance of the 4-neighbour Laplacian on the grey copy below which a photo is blurred. On the
   * 149 photos of eval/rooms-dev, sharp originals measured 121–4500; the same photos with a σ = 3 px
   * Gaussian blur measured 3–52 (median 9).
   */
  minSharpness: 40,

  /** Mean brightness (0–255) below which a photo is too dark to stage (real room photos: 48–190). */
  minMeanBrightness: 40,
  /** Mean brightness (0–255) above which a photo is washed out. */
  maxMeanBrightness: 225,

  /** A grey level at or below this counts as crushed black. */
  darkClipLevel: 8,
  /** Fraction of crushed-black pixels above which the photo is too dark (shadows hide the room). */
  maxDarkClipFraction: 0.45,
  /** A grey level at or above this counts as blown-out white. */
  brightClipLevel: 250,
  /** Fraction of blown-out pixels above which the photo is overexposed (windows alone stay below it). */
  maxBrightClipFraction: 0.4,

  /**
   * Peak person-detector score at or above which a person is taken to be in frame. People walking
   * through a doorway or half cut off score 0.38–0.49 (a passer-by in eval/empty-dev 0.39, cooks and
   * shop staff in eval/rooms-dev 0.38–0.49). Every rooms-dev photo at 0.35 or more shows a person
   * (one only in a mirror); no photo without a visible person scored above 0.25.
   */
  personScore: 0.35,

  /**
   * Least share of an interior of `unknown` type that is taken to be a corridor, staircase or closet,
   * which are not staged. The analyzer says `unknown` for most empty rooms, and a vacant corridor looks
   * like any vacant room, so the room classifier's own small corridor share cannot be trusted there.
   * Hallway views among the labelled interiors: 12 of 128 in eval/rooms-dev, 800 of 6,270 in train
   * (`entrance_hall`): 812 of 6,398, 0.127. The few photos labelled vacant (9) hold no hallway, too
   * few to count on. docs/analyzer.md, "confidence".
   */
  unknownRoomUnstageableShare: 0.127,

  /**
   * Softness of each gate for `confidence`: the probability that a gate's verdict is right is
   * logistic(margin / scale), so a value far from its threshold is near-certain and one on the edge
   * is a coin toss. Scales are in the gate's own unit (px, ln-units of sharpness, grey levels, fraction).
   */
  confidenceScale: {
    shortSide: 48,
    aspect: 0.08,
    logSharpness: 0.3,
    brightness: 8,
    clipFraction: 0.05,
    personScore: 0.056,
  },
} as const;

/** The shape of {@link THRESHOLDS}; pass another object of this shape to tune the analyzer. */
export type Thresholds = {
  [K in keyof typeof THRESHOLDS]: (typeof THRESHOLDS)[K] extends object
    ? { [J in keyof (typeof THRESHOLDS)[K]]: number }
    : number;
};
