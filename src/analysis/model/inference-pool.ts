import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';

import { spawnThread } from '../../runtime/spawn-thread.ts';
import type { RawImage } from '../scene-types.ts';
import type {
  InferenceKind,
  InferenceRequest,
  InferenceResults,
  WorkerMessage,
  WorkerSettings,
} from './worker-protocol.ts';

/** Thrown when more images wait than the pool accepts, so a burst cannot exhaust memory. */
export class InferenceQueueFullError extends Error {
  constructor(limit: number) {
    super(`the scene classifier queue is full (${limit} images waiting)`);
    this.name = 'InferenceQueueFullError';
  }
}

/** Options of an inference pool. */
export interface InferencePoolOptions {
  /** Worker threads, each with its own copy of the model (default: number of CPUs). */
  threads?: number;
  /** Images allowed to wait for a free worker before requests are refused (default 256). */
  maxQueued?: number;
  headPath: string | null;
  /** Network input side when `headPath` is null (feature extraction for training). */
  inputSize?: number;
}

interface Job {
  id: number;
  kind: InferenceKind;
  image: RawImage;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  loaded: boolean;
  job: Job | null;
}

/** Starts one model thread. */
function spawnWorker(settings: WorkerSettings): Worker {
  return spawnThread(new URL('./inference.worker.ts', import.meta.url), settings);
}

/** A fixed set of model threads fed from one FIFO queue; a crashed worker is replaced. */
export class InferencePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private readonly maxQueued: number;
  private nextId = 1;
  private closed = false;
  private readyCount = 0;
  readonly ready: Promise<void>;

  constructor(private readonly options: InferencePoolOptions) {
    const threads = Math.max(1, options.threads ?? availableParallelism());
    this.maxQueued = options.maxQueued ?? 256;
    this.ready = Promise.all(Array.from({ length: threads }, () => this.addWorker())).then(() => undefined);
    // Callers await `ready`; an unobserved failure must not crash the process as unhandled.
    this.ready.catch(() => undefined);
  }

  isReady(): boolean {
    return !this.closed && this.readyCount === this.slots.length && this.slots.length > 0;
  }

  /** Queues one image; resolves with the worker's answer. */
  run<K extends InferenceKind>(kind: K, image: RawImage): Promise<InferenceResults[K]> {
    if (this.closed) return Promise.reject(new Error('the scene classifier is closed'));
    if (this.queue.length >= this.maxQueued)
      return Promise.reject(new InferenceQueueFullError(this.maxQueued));
    return new Promise<InferenceResults[K]>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, kind, image, resolve: resolve as (v: unknown) => void, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the scene classifier was closed'));
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }

  private addWorker(): Promise<void> {
    return new Promise((resolve, reject) => {
      const slot: Slot = {
        worker: spawnWorker({ headPath: this.options.headPath, inputSize: this.options.inputSize }),
        loaded: false,
        job: null,
      };
      this.slots.push(slot);
      slot.worker.on('message', (message: WorkerMessage) => {
        switch (message.type) {
          case 'ready':
            slot.loaded = true;
            this.readyCount++;
            resolve();
            this.dispatch();
            break;
          case 'failed':
            reject(new Error(`the vision model failed to load: ${message.error}`));
            void slot.worker.terminate();
            break;
          case 'result':
          case 'error': {
            const job = slot.job;
            slot.job = null;
            if (job && job.id === message.id) {
              if (message.type === 'result') job.resolve(message.result);
              else job.reject(new Error(message.error));
            }
            this.dispatch();
            break;
          }
        }
      });
      slot.worker.on('error', (err) => {
        slot.job?.reject(err);
        slot.job = null;
        if (!slot.loaded) reject(err);
      });
      slot.worker.on('exit', () => {
        this.slots.splice(this.slots.indexOf(slot), 1);
        slot.job?.reject(new Error('an inference worker exited'));
        slot.job = null;
        if (slot.loaded) this.readyCount--;
        // Replace a worker that died after loading; one that never loaded would fail the same way again.
        if (slot.loaded && !this.closed) this.addWorker().catch(() => undefined);
        if (!slot.loaded) reject(new Error('an inference worker exited before the model loaded'));
      });
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job !== null || !slot.loaded) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      const request: InferenceRequest = { id: job.id, kind: job.kind, image: job.image };
      slot.worker.postMessage(request);
    }
  }
}
