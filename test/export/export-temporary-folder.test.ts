import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { XLSX_TYPE } from '../../src/export/export-formats.ts';
import { SharedStringsSpool } from '../../src/export/shared-strings-spool.ts';
import { catalogOf, importItems, requestExport } from './export-helpers.ts';

/**
 * The XLSX export's temporary file (docs/deployment.md, "A writable temporary folder"): without a
 * writable folder the export is refused before its first byte with a 500 problem that names no path,
 * not sent as an attachment that ends at once, and the error the operator's log shows names the
 * folder; CSV needs none. A client that leaves mid-export leaves no temporary file behind.
 */

const svc = testServiceForFile();

/** The export's temporary files in `folder` (src/export/shared-strings-spool.ts). */
const spools = async (folder: string) =>
  (await fs.readdir(folder)).filter((name) => name.startsWith('catalog-export-strings-'));

/** Runs `body` with `TMPDIR` set to `folder`: `os.tmpdir()` reads it at each call. */
async function withTmpdir<T>(folder: string, body: () => Promise<T>): Promise<T> {
  const before = process.env.TMPDIR;
  process.env.TMPDIR = folder;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
}

void test('no writable temporary folder: the XLSX export is a 500 problem naming no path; CSV is unaffected', async (t) => {
  const token = await svc.token(svc.tenant('tmpdir'));
  await importItems(svc, token, [product({ external_id: 'p-1', name: 'Sofa' })]);
  const stored = await catalogOf(svc, token);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'export-tmpdir-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  // A path under a regular file: no user, root included, can create anything there.
  await fs.writeFile(path.join(dir, 'file'), '');
  const unusable = path.join(dir, 'file', 'tmp');

  const [xlsx, csv] = await withTmpdir(unusable, () =>
    Promise.all([
      requestExport(svc, token, { accept: XLSX_TYPE }),
      requestExport(svc, token, { accept: 'text/csv' }),
    ]),
  );

  assert.equal(xlsx.statusCode, 500);
  assert.equal(xlsx.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(xlsx.headers['content-disposition'], undefined);
  assert.deepEqual(JSON.parse(xlsx.body), {
    type: 'http://service.test/problems/internal-error',
    title: 'Internal server error',
    status: 500,
    detail: 'The request could not be completed; it has been logged.',
    instance: '/products/export',
  });
  // What the log shows (the answer says only that it was logged): the folder, and what to do.
  await assert.rejects(
    withTmpdir(unusable, () => SharedStringsSpool.open()),
    (error: Error) => {
      assert.equal(
        error.message,
        `the XLSX export cannot create its temporary file in ${unusable} (TMPDIR); give the service a writable temporary folder (docs/deployment.md)`,
      );
      assert.equal((error.cause as NodeJS.ErrnoException).code, 'ENOTDIR');
      return true;
    },
  );
  assert.equal(csv.statusCode, 200);
  assert.match(csv.body, /^\uFEFFexternal_id,/);
  assert.match(csv.body, /\np-1,Sofa,/);
  // Nothing stored changed, and with the folder back the XLSX export works.
  assert.deepEqual(await catalogOf(svc, token), stored);
  const again = await requestExport(svc, token, { accept: XLSX_TYPE });
  assert.equal(again.statusCode, 200);
  assert.equal(again.headers['content-disposition'], 'attachment; filename="products.xlsx"');
  assert.equal(again.rawPayload.subarray(0, 4).toString('latin1'), 'PK\u0003\u0004');
});

void test('a client that leaves mid-export leaves no temporary file', async (t) => {
  const token = await svc.token(svc.tenant('leave'));
  // Texts that do not compress and are each their own shared string: the table, sent after the
  // sheet, is megabytes more than the socket's buffers hold, so the export cannot end (and remove
  // its file) while the client reads nothing. First-chunk details: test/export/first-chunk-made.test.ts.
  await importItems(
    svc,
    token,
    Array.from({ length: 4000 }, (_, i) =>
      product({ external_id: `p-${i}`, description: randomBytes(1000).toString('hex') }),
    ),
  );
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'export-leave-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const app = svc.service.app!;
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;

  await withTmpdir(dir, async () => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const request = http.get(
        {
          port,
          path: '/products/export',
          headers: { authorization: `Bearer ${token}`, accept: XLSX_TYPE },
        },
        (response) => {
          response.pause();
          // Still being written when the client leaves: the file exists, and the leaving removes it.
          void sleep(300)
            .then(() => spools(dir))
            .then((open) => {
              assert.equal(open.length, 1, 'the temporary file while the export runs');
              request.destroy();
              resolve(response.statusCode);
            })
            .catch(reject);
        },
      );
      request.on('error', () => undefined);
      setTimeout(() => reject(new Error('no answer')), 20_000).unref();
    });
    assert.equal(status, 200);
    for (let waited = 0; waited < 5000 && (await spools(dir)).length > 0; waited += 100) await sleep(100);
    assert.deepEqual(await spools(dir), []);
  });
});
