import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestService } from '../helpers/test-service.ts';
import { allProducts, withoutTimestamps } from '../helpers/assertions.ts';

/** What the export tests share: calling the export, reading its lines, importing them again. */

export const EXPORT_PATH = '/products/export';

/** `GET /products/export` with an optional `Accept` and query. */
export function requestExport(
  svc: TestService,
  token: string,
  { accept, query = '' }: { accept?: string; query?: string } = {},
): Promise<LightMyRequestResponse> {
  return svc.request({
    method: 'GET',
    url: `${EXPORT_PATH}${query}`,
    token,
    headers: accept === undefined ? {} : { accept },
  });
}

/** The lines of a 200 NDJSON export, each parsed; asserts the type and that the body ends in a newline. */
export function linesOf(res: LightMyRequestResponse): Array<Record<string, unknown>> {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'application/x-ndjson');
  if (res.body === '') return [];
  assert.ok(res.body.endsWith('\n'), 'every line ends in a newline');
  return res.body
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Ingests `items` in order, in batches of at most 1000, each one completed before the next. */
export async function importItems(svc: TestService, token: string, items: unknown[]): Promise<void> {
  for (let from = 0; from < items.length; from += 1000) {
    const batchId = await svc.submit(token, items.slice(from, from + 1000));
    const record = await svc.waitForTerminal(token, batchId, 60_000);
    assert.equal(record.status, 'completed', JSON.stringify(await svc.allErrors(token, batchId)));
  }
}

/** Every product of the tenant as `GET /products` lists them, timestamps aside. */
export async function catalogOf(svc: TestService, token: string): Promise<Array<Record<string, unknown>>> {
  return (await allProducts(svc, token, 500)).map(withoutTimestamps);
}
