import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { storeBatch } from '../helpers/stored-batch.ts';
import { readMigrations } from '../../src/db/migrate.ts';
import { mergeImages, type MergedImage } from '../../src/catalog/merge-items.ts';

/**
 * What the migrations leave behind that a client cannot see: how batch bodies are stored, the
 * function the variants upsert merges images with, and when batches ended.
 */

let svc: TestService;
before(async () => {
  // Batches here end in the past; the worker must keep them.
  svc = await startTestService({ BATCH_RETENTION_DAYS: '0' });
});
after(async () => {
  await svc?.stop();
});

void describe('migration 003: batch bodies', () => {
  void test('are lz4-compressed on a server and stored uncompressed on PGlite, and read back as sent', async () => {
    const { db } = svc.service;
    const tenant = svc.tenant('storage');
    const items = Array.from({ length: 40 }, () => product());
    // Stored with no job, so that no worker ends the batch (and drops its body) under the test.
    const batchId = await storeBatch(db, tenant, items);

    const [column] = await db.query<{ storage: string; compression: string }>(
      `SELECT attstorage AS storage, attcompression::text AS compression
       FROM pg_attribute WHERE attrelid = 'batch_payloads'::regclass AND attname = 'body'`,
    );
    const [stored] = await db.query<{ compression: string | null; body: string }>(
      `SELECT pg_column_compression(body) AS compression, body FROM batch_payloads
       WHERE tenant_id = $1 AND batch_id = $2`,
      [tenant, batchId],
    );
    if (db.kind === 'server') {
      assert.deepEqual(column, { storage: 'x', compression: 'l' });
      assert.equal(stored?.compression, 'lz4');
    } else {
      assert.deepEqual(column, { storage: 'e', compression: '' });
      assert.equal(stored?.compression, null);
    }
    assert.deepEqual(JSON.parse(stored?.body ?? 'null'), { items });
  });
});

void describe('migration 004: bodies of ended batches', () => {
  void test('are deleted, and the bodies of batches still to run are kept', async () => {
    const { db } = svc.service;
    const tenant = svc.tenant('ended-bodies');
    const ids: Record<string, string> = {};
    for (const status of ['accepted', 'processing', 'completed', 'completed_with_errors', 'failed']) {
      ids[status] = await storeBatch(db, tenant, [product()]);
      await db.query('UPDATE batches SET status = $3 WHERE tenant_id = $1 AND id = $2', [
        tenant,
        ids[status],
        status,
      ]);
    }
    const migration = (await readMigrations()).find((m) => m.version === 4)!;
    assert.equal(migration.name, 'drop_ended_bodies');
    await db.exec(migration.sql);

    const kept = await db.query<{ batch_id: string }>(
      'SELECT batch_id::text FROM batch_payloads WHERE tenant_id = $1',
      [tenant],
    );
    assert.deepEqual(kept.map((row) => row.batch_id).sort(), [ids.accepted, ids.processing].sort());
  });
});

void describe('migration 006: when batches ended', () => {
  void test('a batch that ended before it is taken to have ended at its last change; others have no end', async () => {
    const { db } = svc.service;
    const tenant = svc.tenant('ended-at');
    const ids: Record<string, string> = {};
    for (const status of ['accepted', 'processing', 'completed', 'completed_with_errors', 'failed']) {
      ids[status] = await storeBatch(db, tenant, [product()]);
      // As a batch ended before the migration left it: terminal, with no end recorded (the
      // trigger records one when the status changes, so the end is cleared after).
      await db.query(
        `UPDATE batches SET status = $3, updated_at = '2026-01-02T03:04:05.678Z' WHERE tenant_id = $1 AND id = $2`,
        [tenant, ids[status], status],
      );
      await db.query('UPDATE batches SET ended_at = NULL WHERE tenant_id = $1 AND id = $2', [
        tenant,
        ids[status],
      ]);
    }
    const migration = (await readMigrations()).find((m) => m.version === 6)!;
    assert.equal(migration.name, 'batch_retention');
    await db.exec(migration.sql);

    const rows = await db.query<{ status: string; ended_at: Date | null }>(
      'SELECT status, ended_at FROM batches WHERE tenant_id = $1 ORDER BY seq',
      [tenant],
    );
    assert.deepEqual(
      rows.map((row) => [row.status, row.ended_at?.toISOString() ?? null]),
      [
        ['accepted', null],
        ['processing', null],
        ['completed', '2026-01-02T03:04:05.678Z'],
        ['completed_with_errors', '2026-01-02T03:04:05.678Z'],
        ['failed', '2026-01-02T03:04:05.678Z'],
      ],
    );
  });
});

void describe('migration 006: the trigger that records when a batch ends', () => {
  void test('sets the end as a batch ends, keeps one the statement sets, and leaves ended batches alone', async () => {
    const { db } = svc.service;
    const tenant = svc.tenant('end-trigger');
    const endOf = async (id: string) =>
      (
        await db.query<{ ended_at: Date | null }>(
          'SELECT ended_at FROM batches WHERE tenant_id = $1 AND id = $2',
          [tenant, id],
        )
      )[0]!.ended_at;
    const set = (id: string, assignments: string) =>
      db.query(`UPDATE batches SET ${assignments} WHERE tenant_id = $1 AND id = $2`, [tenant, id]);
    const secondsAgo = (date: Date | null) => (Date.now() - (date?.getTime() ?? 0)) / 1000;

    // Moving on between unfinished states records nothing.
    const running = await storeBatch(db, tenant, [product()]);
    await set(running, `status = 'validating'`);
    assert.equal(await endOf(running), null);
    // Ending records now, also over an end a repair left on a reopened batch.
    await set(running, `ended_at = '2000-01-01T00:00:00Z'`);
    await set(running, `status = 'completed'`);
    assert.ok(secondsAgo(await endOf(running)) < 60, String(await endOf(running)));
    // A move between ended states keeps the end.
    await set(running, `ended_at = '2001-01-01T00:00:00Z'`);
    await set(running, `status = 'failed'`);
    assert.equal((await endOf(running))?.toISOString(), '2001-01-01T00:00:00.000Z');
    // An end the ending statement sets itself is kept.
    const repaired = await storeBatch(db, tenant, [product()]);
    await set(repaired, `status = 'failed', ended_at = '2002-01-01T00:00:00Z'`);
    assert.equal((await endOf(repaired))?.toISOString(), '2002-01-01T00:00:00.000Z');
  });
});

/** Images as the catalog shows them: a stored image without an angle has a null one. */
const shown = (images: readonly MergedImage[]) =>
  images.map(({ url, angle }) => ({ url, angle: angle ?? null }));

/** `merge_images(stored, patch)` for each pair, in one statement. */
async function mergedInSql(pairs: ReadonlyArray<[MergedImage[], MergedImage[]]>): Promise<MergedImage[][]> {
  const rows = await svc.service.db.query<{ merged: MergedImage[] }>(
    `SELECT merge_images((e.pair -> 'stored')::jsonb, (e.pair -> 'patch')::jsonb) AS merged
     FROM json_array_elements($1::json) WITH ORDINALITY AS e(pair, n)
     ORDER BY e.n`,
    [JSON.stringify(pairs.map(([stored, patch]) => ({ stored, patch })))],
  );
  return rows.map((row) => row.merged);
}

/** A small deterministic generator (mulberry32), so a failing case can be replayed. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

void describe('migration 005: merge_images, how the variants upsert merges images', () => {
  const a = 'https://cdn.example/a.jpg';
  const b = 'https://cdn.example/b.jpg';
  const c = 'https://cdn.example/c.jpg';

  void test('updates known urls in place, appends new ones in order, keeps unsent ones', async () => {
    const cases: Array<[MergedImage[], MergedImage[], MergedImage[]]> = [
      // No images sent: the stored ones stay, whatever they are.
      [[], [], []],
      [[{ url: a, angle: 1 }], [], [{ url: a, angle: 1 }]],
      // The same images again.
      [[{ url: a, angle: 1 }], [{ url: a, angle: 1 }], [{ url: a, angle: 1 }]],
      // An absent angle keeps the stored one; null clears it; a number replaces it.
      [
        [
          { url: a, angle: 1 },
          { url: b, angle: 2 },
        ],
        [{ url: b }],
        [
          { url: a, angle: 1 },
          { url: b, angle: 2 },
        ],
      ],
      [
        [
          { url: a, angle: 1 },
          { url: b, angle: 2 },
        ],
        [{ url: b, angle: null }],
        [
          { url: a, angle: 1 },
          { url: b, angle: null },
        ],
      ],
      [
        [{ url: a, angle: 1 }],
        [{ url: c, angle: 5 }, { url: a, angle: 7 }, { url: b }],
        [{ url: a, angle: 7 }, { url: c, angle: 5 }, { url: b }],
      ],
      // A stored image sent without an angle gets one later, or keeps having none.
      [[{ url: a }], [{ url: a, angle: 90 }], [{ url: a, angle: 90 }]],
      [[{ url: a }], [{ url: a }, { url: b, angle: 0 }], [{ url: a }, { url: b, angle: 0 }]],
    ];
    const merged = await mergedInSql(cases.map(([stored, patch]) => [stored, patch]));
    assert.deepEqual(
      merged,
      cases.map(([, , expected]) => expected),
    );
  });

  void test('a run of patches folded together, then merged in SQL, gives what merging them one by one gives', async () => {
    const next = random(20261125);
    const urls = Array.from({ length: 6 }, (_, i) => `https://cdn.example/${i}.jpg`);
    const angleOf = (): Partial<MergedImage> => {
      const roll = next();
      return roll < 0.3 ? {} : roll < 0.5 ? { angle: null } : { angle: Math.floor(next() * 360) };
    };
    const images = (max: number): MergedImage[] => {
      const pool = [...urls].sort(() => next() - 0.5);
      return pool.slice(0, Math.floor(next() * (max + 1))).map((url) => ({ url, ...angleOf() }));
    };
    const cases = Array.from({ length: 400 }, () => {
      const stored = images(4);
      const patches = Array.from({ length: 1 + Math.floor(next() * 3) }, () => images(4));
      return { stored, patches };
    });
    const sql = await mergedInSql(
      cases.map(({ stored, patches }) => [stored, patches.reduce<MergedImage[]>(mergeImages, [])]),
    );
    cases.forEach(({ stored, patches }, i) => {
      const oneByOne = patches.reduce<MergedImage[]>(mergeImages, stored);
      assert.deepEqual(shown(sql[i]!), shown(oneByOne), JSON.stringify({ stored, patches }));
    });
  });
});
