import type { Database } from '../db/database.ts';
import type { DeliveryJob, JobQueue } from '../queue/job-queue.ts';
import type { Metrics } from '../observability/metrics.ts';
import { createBatchedStatusReads } from '../ingestion/batched-status-reads.ts';
import { toBatchRecord } from '../ingestion/batches/batch.repository.ts';
import {
  claimDelivery,
  disableEndpoint,
  findDueDeliveries,
  oldestPendingAgeSeconds,
  recordAttempt,
  type AttemptResult,
  type ClaimedDelivery,
} from './delivery.repository.ts';
import { ATTEMPT_TIMEOUT_MS, type SendWebhook } from './delivery-sender.ts';
import { signatureHeader } from './webhook-signature.ts';

/**
 * Sending webhook deliveries (docs/reference.md §10.1), in the worker role and never inside a batch's
 * processing. The statement that ends a batch records its deliveries (the outbox); this part finds
 * them and sends them:
 * - a sweep, every second, sends a queue job (pg-boss) for each pending delivery that is due and
 *   not being attempted. It is the only way a delivery reaches the queue besides a redelivery, so a
 *   process that dies after a batch ended, or in the middle of an attempt, loses nothing: the row is
 *   still pending, and the next sweep of any worker (this one after a restart) sends it again. An
 *   attempt's claim lapses after {@link CLAIM_LAPSE_SECONDS}, so one whose process died is retried.
 * - a job claims its delivery, sends one attempt and records the result with the schedule's delay.
 * At-least-once: an attempt cut off after the receiver got it but before its result was recorded is
 * sent again, with the same `webhook-id`, which is how a receiver recognizes it.
 */

/** How often the sweep looks for due deliveries: also the delay after a batch ends. */
const SWEEP_INTERVAL_MS = 1_000;
/** Deliveries the sweep sends per run at most; the rest wait for the next. */
const SWEEP_LIMIT = 200;
/** The answer that disables an endpoint (docs/reference.md §10.1). */
const GONE = 410;
/** Why a delivery is not sent, or not retried, once another delivery of its endpoint heard 410. */
const DISABLED_BY_GONE = 'the endpoint answered HTTP 410 Gone to another delivery and was disabled';
/** Attempts one worker process makes at once. */
const DELIVERY_CONCURRENCY = 4;
/**
 * A claim older than this belongs to an attempt whose process died: an attempt ends within its
 * 15 s timeout, and recording its result takes well under the rest.
 */
export const CLAIM_LAPSE_SECONDS = ATTEMPT_TIMEOUT_MS / 1000 + 5;

/** A minimal logger (pino-compatible). */
interface Logger {
  warn(obj: object, msg?: string): void;
}

/** The delivery side of webhooks in a worker process. */
export interface WebhookDispatcher {
  start(): Promise<void>;
  /** Stops the sweep; attempts in flight end with the queue's own stop. */
  stop(): void;
  /** Makes one attempt of a delivery, if it is due and nobody else attempts it (what a job does). */
  attempt(job: DeliveryJob): Promise<void>;
  /** One sweep: sends a job for each due delivery and updates the oldest-pending gauge. */
  sweep(): Promise<void>;
}

/** Creates the dispatcher of a worker process; `send` makes the HTTP request. */
export function createWebhookDispatcher(deps: {
  db: Database;
  queue: JobQueue;
  metrics: Metrics;
  log: Logger;
  send: SendWebhook;
  retrySchedule: readonly number[];
}): WebhookDispatcher {
  const { db, queue, metrics, log } = deps;
  const readBatch = createBatchedStatusReads(db);
  let timer: NodeJS.Timeout | undefined;
  let sweeping = false;

  /** The body of a delivery: `{type, timestamp, data}`, the batch's terminal status record. */
  async function payloadOf(claim: ClaimedDelivery): Promise<string | null> {
    if (claim.payload !== null) return claim.payload;
    const batch = await readBatch(claim.tenantId, claim.batchId);
    if (!batch) return null;
    const data = toBatchRecord(batch);
    return JSON.stringify({ type: claim.event, timestamp: data.updated_at, data });
  }

  /** What the answer (or its absence) means for the delivery, by the retry schedule. */
  function resultOf(claim: ClaimedDelivery, answer: Awaited<ReturnType<SendWebhook>>): AttemptResult {
    const { statusCode } = answer;
    if (statusCode !== null && statusCode >= 200 && statusCode <= 299)
      return { outcome: 'delivered', statusCode };
    if (statusCode === GONE) {
      return {
        outcome: 'failed',
        statusCode,
        error: 'The endpoint answered HTTP 410 Gone: it is now disabled',
      };
    }
    const error = statusCode === null ? answer.error : `The endpoint answered HTTP ${statusCode}`;
    const delaySeconds = deps.retrySchedule[claim.attempts];
    if (claim.finalAttempt || delaySeconds === undefined) return { outcome: 'failed', statusCode, error };
    return {
      outcome: 'retry',
      statusCode,
      error,
      delaySeconds,
      errorIfDisabled: `${error}; not retried: ${DISABLED_BY_GONE}`,
    };
  }

  async function attempt(job: DeliveryJob): Promise<void> {
    const claim = await claimDelivery(db, { ...job, claimLapseSeconds: CLAIM_LAPSE_SECONDS });
    if (!claim) return;
    const payload = await payloadOf(claim);
    if (!claim.enabled || payload === null) {
      const error = claim.enabled
        ? 'The batch no longer exists (deleted after its retention period)'
        : 'The endpoint is disabled';
      await recordAttempt(db, claim, { outcome: 'failed', statusCode: null, error }, payload);
      metrics.webhookDeliveries.inc({ outcome: 'failed' });
      return;
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const started = process.hrtime.bigint();
    const answer = await deps.send({
      url: claim.url,
      body: payload,
      headers: {
        'webhook-id': claim.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(claim.secrets, { id: claim.id, timestamp, body: payload }),
      },
    });
    metrics.webhookAttemptSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    const result = resultOf(claim, answer);
    if (result.statusCode === GONE) {
      // The endpoint is disabled with the result that says why, or not at all (a lapsed claim).
      await db.transaction(async (tx) => {
        if (await recordAttempt(tx, claim, result, payload)) {
          await disableEndpoint(tx, {
            tenantId: claim.tenantId,
            endpointId: claim.endpointId,
            claimLapseSeconds: CLAIM_LAPSE_SECONDS,
            notSent: `Not sent: ${DISABLED_BY_GONE}`,
            notRetried: `Not retried: ${DISABLED_BY_GONE}`,
          });
        }
      });
    } else {
      await recordAttempt(db, claim, result, payload);
    }
    metrics.webhookDeliveries.inc({ outcome: result.outcome });
  }

  async function sweep(): Promise<void> {
    const due = await findDueDeliveries(db, { limit: SWEEP_LIMIT, claimLapseSeconds: CLAIM_LAPSE_SECONDS });
    for (const delivery of due) await queue.sendDelivery(delivery);
    metrics.webhookOldestPendingSeconds.set(await oldestPendingAgeSeconds(db));
  }

  return {
    attempt,
    sweep,
    async start() {
      await queue.workDeliveries(DELIVERY_CONCURRENCY, attempt);
      timer = setInterval(() => {
        // A slow database must not pile sweeps up: one at a time.
        if (sweeping) return;
        sweeping = true;
        sweep()
          .catch((error: unknown) => log.warn({ err: error }, 'webhook delivery sweep failed'))
          .finally(() => (sweeping = false));
      }, SWEEP_INTERVAL_MS);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
