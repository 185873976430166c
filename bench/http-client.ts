import { SignJWT } from 'jose';
import { Agent, request } from 'undici';

const TERMINAL = new Set(['completed', 'completed_with_errors', 'failed']);

/** A minimal client of the running service, for the benchmark. */
export interface BenchClient {
  submit(body: string): Promise<{ batchId: string; ms: number }>;
  /** `POST /products/ingestions/preview`: the answer's summary and how long it took. */
  preview(body: string): Promise<{ summary: Record<string, number>; ms: number }>;
  status(batchId: string): Promise<{ status: string; ms: number; record: Record<string, unknown> }>;
  waitTerminal(batchIds: string[]): Promise<Array<Record<string, unknown>>>;
  /**
   * `GET /products/export` + `query` in the form `accept` names, read as it streams: its line breaks
   * (`\n`), bytes, first bytes and time to the last byte.
   */
  exportCatalog(
    query: string,
    accept: string,
  ): Promise<{ lines: number; bytes: number; head: Buffer; ms: number }>;
  /** `GET /products?` + `query` (a search): its total and the time to the last byte. */
  search(query: string): Promise<{ total: number; ms: number }>;
  /** The actions of a product's history entries, newest first (its first page of 500). */
  historyActions(externalId: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A client on undici's `request` over a keep-alive pool rather than `fetch`, which costs several
 * times more CPU per request: the client shares the machine's two cores with the service, and a
 * heavy client would slow the service it measures.
 */
export async function createBenchClient(
  baseUrl: string,
  secret: string,
  tenantId: string,
): Promise<BenchClient> {
  const token = await new SignJWT({
    tenant_id: tenantId,
    scope: 'ingestions:write ingestions:read catalog:read',
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(secret));
  const authorization = `Bearer ${token}`;
  const dispatcher = new Agent({ connections: 64, pipelining: 1 });

  /** POSTs a JSON body to `path`; the parsed answer, which must have `status`, and the time to the last byte. */
  async function post<T>(path: string, body: string, status: number): Promise<{ answer: T; ms: number }> {
    const started = performance.now();
    const res = await request(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body,
      dispatcher,
    });
    const text = await res.body.text();
    const ms = performance.now() - started;
    if (res.statusCode !== status)
      throw new Error(`${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
    return { answer: JSON.parse(text) as T, ms };
  }

  const client: BenchClient = {
    async submit(body) {
      const { answer, ms } = await post<{ batch_id: string }>('/products/ingestions', body, 202);
      return { batchId: answer.batch_id, ms };
    },
    async preview(body) {
      const { answer, ms } = await post<{ summary: Record<string, number> }>(
        '/products/ingestions/preview',
        body,
        200,
      );
      return { summary: answer.summary, ms };
    },
    async status(batchId) {
      const started = performance.now();
      const res = await request(`${baseUrl}/products/ingestions/${batchId}`, {
        headers: { authorization },
        dispatcher,
      });
      const record = (await res.body.json()) as Record<string, unknown>;
      return { status: String(record.status), ms: performance.now() - started, record };
    },
    async waitTerminal(batchIds) {
      const records: Array<Record<string, unknown>> = [];
      for (const id of batchIds) {
        for (;;) {
          const { status, record } = await client.status(id);
          if (TERMINAL.has(status)) {
            records.push(record);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
      return records;
    },
    async exportCatalog(query, accept) {
      const started = performance.now();
      const res = await request(`${baseUrl}/products/export${query}`, {
        headers: { authorization, accept },
        dispatcher,
      });
      if (res.statusCode !== 200)
        throw new Error(`export answered ${res.statusCode}: ${await res.body.text()}`);
      let lines = 0;
      let bytes = 0;
      let head = Buffer.alloc(0);
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (head.length < 4) head = Buffer.concat([head, chunk.subarray(0, 4 - head.length)]);
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
      }
      return { lines, bytes, head, ms: performance.now() - started };
    },
    async search(query) {
      const started = performance.now();
      const res = await request(`${baseUrl}/products?${query}`, { headers: { authorization }, dispatcher });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`search answered ${res.statusCode}: ${text}`);
      return { total: (JSON.parse(text) as { total: number }).total, ms: performance.now() - started };
    },
    async historyActions(externalId) {
      const res = await request(`${baseUrl}/products/${encodeURIComponent(externalId)}/history?limit=500`, {
        headers: { authorization },
        dispatcher,
      });
      const page = (await res.body.json()) as { data: Array<{ action: string }> };
      return page.data.map(({ action }) => action);
    },
    close: () => dispatcher.close(),
  };
  return client;
}

/** The p-th percentile (0–100) of `values`, nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
