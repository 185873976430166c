import { randomUUID } from 'node:crypto';
import type { Member } from './cluster.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A request that got a 5xx or no answer at all (connection refused or cut, timeout). */
export interface FailedRequest {
  method: string;
  path: string;
  api: string;
  /** The status, or the error's code (`ECONNREFUSED`, `UND_ERR_SOCKET`, `TimeoutError`). */
  outcome: number | string;
  start: number;
  end: number;
}

/** An answered request. */
export interface Answer {
  status: number;
  json: unknown;
  headers: Headers;
}

/** A submission that got its 202 after `lost` attempts whose outcome is unknown. */
export interface Submission {
  batchId: string;
  /**
   * Attempts answered 5xx or not at all. Every attempt carries the submission's one
   * `Idempotency-Key` (CONTRACT §10.2), so none of them may have created a second batch.
   */
  lost: number;
  /** The 202 was a replay (`Idempotent-Replayed: true`): a lost attempt had stored the batch. */
  replayed: boolean;
}

/** What every request of the run met, for the final accounting. */
export interface RequestLog {
  failed: FailedRequest[];
  answered: number;
  /** When each 202 arrived (ms since the epoch), when the run wants them (a failover's recovery). */
  accepted?: number[];
}

/**
 * A client of the cluster's API processes, round-robin, that retries what is safe to retry: reads
 * on a 5xx or a connection error, and submissions too, each with its own `Idempotency-Key` on every
 * attempt, so that a lost answer is retried without a second batch (the run checks the tenant's
 * batch list for exactly one batch per submission).
 */
export function createChaosClient(apis: readonly Member[], log: RequestLog) {
  let turn = 0;

  /** One attempt on the next API process; throws on a connection error, after logging it. */
  async function attempt(
    token: string,
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const api = apis[turn++ % apis.length]!;
    const start = Date.now();
    try {
      const res = await fetch(`${api.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body,
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      const answer = {
        status: res.status,
        json: text ? (JSON.parse(text) as unknown) : null,
        headers: res.headers,
      };
      if (res.status >= 500)
        log.failed.push({ method, path, api: api.name, outcome: res.status, start, end: Date.now() });
      else log.answered++;
      if (res.status === 202) log.accepted?.push(Date.now());
      return answer;
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      const outcome = cause?.code ?? (error as Error).name;
      log.failed.push({ method, path, api: api.name, outcome, start, end: Date.now() });
      throw error;
    }
  }

  /** A GET retried on 5xx and connection errors until `deadline`; answers the first other status. */
  async function get(token: string, path: string, deadline = Date.now() + 120_000): Promise<Answer> {
    for (;;) {
      try {
        const answer = await attempt(token, 'GET', path);
        if (answer.status < 500) return answer;
      } catch {
        // Logged; another API process, or this one back, answers the retry.
      }
      if (Date.now() > deadline) throw new Error(`GET ${path}: no answer below 500 before the deadline`);
      await sleep(200);
    }
  }

  /**
   * Submits `items` until a 202, every attempt with the same `Idempotency-Key`; 429s wait
   * `Retry-After`, 5xx and lost answers count as `lost`.
   */
  async function submit(
    token: string,
    items: unknown[],
    deadline = Date.now() + 180_000,
  ): Promise<Submission> {
    const body = JSON.stringify({ items });
    const key = { 'idempotency-key': randomUUID() };
    let lost = 0;
    for (;;) {
      let answer: Answer | null = null;
      try {
        answer = await attempt(token, 'POST', '/products/ingestions', body, key);
      } catch {
        lost++;
      }
      if (answer?.status === 202) {
        const batchId = (answer.json as { batch_id: string }).batch_id;
        return { batchId, lost, replayed: answer.headers.get('idempotent-replayed') === 'true' };
      }
      if (answer && answer.status >= 500) lost++;
      else if (answer && answer.status !== 429) {
        throw new Error(`submission answered ${answer.status}: ${JSON.stringify(answer.json)}`);
      }
      if (Date.now() > deadline) throw new Error('submission not accepted before the deadline');
      await sleep(answer?.status === 429 ? Number(answer.headers.get('retry-after') ?? 1) * 1000 : 300);
    }
  }

  return { attempt, get, submit };
}

/** The chaos run's client. */
export type ChaosClient = ReturnType<typeof createChaosClient>;
