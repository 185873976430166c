import type { RawImage, SceneClassifier, SceneVerdict } from '../scene-types.ts';
import { InferencePool } from './inference-pool.ts';
import { DEFAULT_HEAD_PATH } from './room-head.ts';

/** Options of the vision model. */
export interface SceneClassifierOptions {
  /** Inference threads, one model copy each (default: number of CPUs). */
  threads?: number;
  /** Images allowed to wait for a free thread; more are refused with InferenceQueueFullError (default 256). */
  maxQueued?: number;
  /** Classifier head to load instead of the committed room-classifier.json (evaluation of a refit). */
  headPath?: string;
}

/**
 * Starts the vision model: a pool of worker threads, each loading CenterNet and the room classifier
 * head once. Loading begins immediately; `ready()` resolves when every thread has warmed up.
 */
export function createSceneClassifier(options: SceneClassifierOptions = {}): SceneClassifier {
  const pool = new InferencePool({
    threads: options.threads,
    maxQueued: options.maxQueued,
    headPath: options.headPath ?? DEFAULT_HEAD_PATH,
  });
  return {
    ready: () => pool.ready,
    isReady: () => pool.isReady(),
    classify: (image: RawImage): Promise<SceneVerdict> => pool.run('verdict', image),
    close: () => pool.close(),
  };
}
