/**
 * One inference thread: loads CenterNet (and the classifier head) once, then answers requests one at a
 * time. The wasm backend is single-threaded, so the pool runs one of these per core.
 */
import { parentPort, workerData } from 'node:worker_threads';

import { CenterNetModel } from './centernet-model.ts';
import { extractFeatures } from './model-features.ts';
import { loadRoomHead, type RoomHead } from './room-head.ts';
import { decideVerdict } from './scene-verdict.ts';
import type { InferenceRequest, WorkerMessage, WorkerSettings } from './worker-protocol.ts';

const port = parentPort;
if (!port) throw new Error('inference.worker.ts must run as a worker thread');
const settings = workerData as WorkerSettings;

function post(message: WorkerMessage): void {
  port!.postMessage(message);
}

async function start(): Promise<void> {
  let model: CenterNetModel;
  let head: RoomHead | null;
  try {
    head = settings.headPath === null ? null : await loadRoomHead(settings.headPath);
    // A head's features were extracted at one input side; the network must run at the same.
    model = await CenterNetModel.load(head?.inputSize ?? settings.inputSize);
  } catch (err) {
    post({ type: 'failed', error: err instanceof Error ? err.message : String(err) });
    return;
  }
  port!.on('message', (request: InferenceRequest) => {
    try {
      if (request.kind === 'features') {
        post({ type: 'result', id: request.id, result: extractFeatures(model, request.image) });
      } else {
        if (!head) throw new Error('no classifier head loaded: run `npm run train` first');
        // Only the head's own blocks are pooled: the others cost time and are not read.
        const features = extractFeatures(model, request.image, head.blocks);
        post({ type: 'result', id: request.id, result: decideVerdict(head, features) });
      }
    } catch (err) {
      post({ type: 'error', id: request.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
  post({ type: 'ready' });
}

void start();
