import type { RawImage, SceneVerdict } from '../scene-types.ts';
import type { ModelFeatures } from './model-features.ts';

/** What a pool worker is asked: the full verdict, or the raw features (training and evaluation). */
export type InferenceKind = 'verdict' | 'features';

/** Result type for each request kind. */
export interface InferenceResults {
  verdict: SceneVerdict;
  features: ModelFeatures;
}

/** Main thread → worker. */
export interface InferenceRequest {
  id: number;
  kind: InferenceKind;
  image: RawImage;
}

/** Worker → main thread. `ready`/`failed` report the model load; the rest answer one request. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; result: SceneVerdict | ModelFeatures }
  | { type: 'error'; id: number; error: string };

/** Passed to each worker at start. */
export interface WorkerSettings {
  /** Classifier head JSON to load; null when only features are requested (before the first training). */
  headPath: string | null;
  /** Network input side for `features` requests when no head is loaded (a head brings its own). */
  inputSize?: number;
}
