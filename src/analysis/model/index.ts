/** The vision model half of the stageability analyzer: what a picture shows. */
export { decodeForModel } from './decode-for-model.ts';
export { InferenceQueueFullError } from './inference-pool.ts';
export { createSceneClassifier, type SceneClassifierOptions } from './scene-classifier.ts';
