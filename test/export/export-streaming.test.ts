import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { importItems } from './export-helpers.ts';

/**
 * The export streams (docs/reference.md §11.4): over a real socket, a client that stops reading stops the
 * service's page reads, and one that reads on gets every product.
 */

const svc = testServiceForFile();

const PRODUCTS = 4000;
/** The export reads 500 products a statement (EXPORT_PAGE_SIZE): 8 full pages, then one empty read. */
const READS = PRODUCTS / 500 + 1;

/** Counts the export's page statements on the service's database from now on. */
function countPageReads(): { count: () => number; stop: () => void } {
  const db = svc.service.db;
  const query = db.query.bind(db);
  let reads = 0;
  db.query = <R>(text: string, params?: readonly unknown[]) => {
    if (text.includes('json_agg(x ORDER BY x.external_id)')) reads++;
    return query<R>(text, params);
  };
  return { count: () => reads, stop: () => void (db.query = query) };
}

/** Waits until `count` has not changed for 500 ms (at most 20 s), and returns it. */
async function settled(count: () => number): Promise<number> {
  let last = -1;
  for (let waited = 0; waited < 20_000 && count() !== last; waited += 500) {
    last = count();
    await sleep(500);
  }
  return count();
}

void test('a client that stops reading stops the page reads; reading on gets every product', async () => {
  const token = await svc.token(svc.tenant('stream'));
  // About 20 MB of lines: far more than the socket's buffers and the response's own.
  const description = 'Solid oak, hand finished. '.repeat(200);
  const items = Array.from({ length: PRODUCTS }, (_, i) =>
    product({ external_id: `p-${String(i).padStart(5, '0')}`, description }),
  );
  await importItems(svc, token, items);

  const app = svc.service.app!;
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const reads = countPageReads();
  try {
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http
        .get({ port, path: '/products/export', headers: { authorization: `Bearer ${token}` } }, resolve)
        .on('error', reject);
    });
    assert.equal(response.statusCode, 200);
    response.pause();
    const whilePaused = await settled(reads.count);
    assert.ok(
      whilePaused >= 1 && whilePaused <= 3,
      `${whilePaused} of ${READS} pages read while the client read nothing`,
    );

    let lines = 0;
    let tail = '';
    response.setEncoding('utf8');
    for await (const chunk of response) {
      const text = tail + (chunk as string);
      const cut = text.lastIndexOf('\n') + 1;
      lines += text.slice(0, cut).split('\n').length - 1;
      tail = text.slice(cut);
    }
    assert.equal(tail, '');
    assert.equal(lines, PRODUCTS);
    assert.equal(reads.count(), READS);

    // A client that hangs up mid-file ends the reads too.
    const before = reads.count();
    await new Promise<void>((resolve, reject) => {
      const request = http.get(
        { port, path: '/products/export', headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.once('data', () => {
            request.destroy();
            resolve();
          });
        },
      );
      request.on('error', () => undefined);
      request.on('close', resolve);
      setTimeout(() => reject(new Error('no data')), 20_000).unref();
    });
    const afterHangUp = (await settled(reads.count)) - before;
    assert.ok(afterHangUp >= 1 && afterHangUp <= 3, `${afterHangUp} pages read after the client hung up`);
  } finally {
    reads.stop();
  }
});
