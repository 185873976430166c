import { ApiError, call, query } from '../api.ts';
import type { Accepted } from '../api-types.ts';

/** Items per submission: the service's limit (CONTRACT §4). */
export const SUBMISSION_SIZE = 1000;

/** The body of a submission or preview, built from the items' JSON texts without parsing them. */
export function envelope(texts: string[]): string {
  return `{"items":[${texts.join(',')}]}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Submits one group under `key` (CONTRACT §10.2), labelled `label` (§11.1). A 429 is waited out (its Retry-After) and the same
 * request sent again; since the key travels with it, a request that did reach the service before the
 * connection broke is answered with the batch it made instead of making a second one.
 */
export async function submitGroup(
  texts: string[],
  key: string,
  label: string,
  onWait: (seconds: number) => void,
): Promise<Accepted & { replayed: boolean }> {
  for (;;) {
    try {
      const response = await call(`/products/ingestions${query({ label })}`, {
        method: 'POST',
        body: envelope(texts),
        headers: { 'idempotency-key': key },
      });
      const accepted = (await response.json()) as Accepted;
      return { ...accepted, replayed: response.headers.get('idempotent-replayed') === 'true' };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 429) throw error;
      const seconds = error.retryAfterSeconds ?? 5;
      onWait(seconds);
      await sleep(seconds * 1000);
    }
  }
}

/** A key for each submission of one import: the run's random id and the group's number. */
export function idempotencyKey(runId: string, group: number): string {
  return `dashboard-${runId}-${group}`;
}
