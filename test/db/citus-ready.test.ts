import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * The schema is ready to be distributed by tenant (docs/scaling.md): read from `pg_catalog` on the
 * migrated database, every table of the service's schema but the named exceptions has `tenant_id`,
 * and every primary key, unique index and foreign key includes it, so that Citus can place each
 * tenant's rows of every table on one node and check those constraints there.
 */

/** Tables that are not the tenants' data, and why they need no `tenant_id`. */
const NOT_TENANT_TABLES: Record<string, string> = {
  // Which migrations ran: one row per migration for the whole deployment (a reference table).
  schema_migrations: 'the migrations applied, for the whole deployment',
};

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

/** The service's tables in the schema the database works in. */
async function tables(): Promise<string[]> {
  const rows = await svc.service.db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
     ORDER BY 1`,
  );
  return rows.map((row) => row.name);
}

void test('every tenant table has tenant_id; the exceptions are named', async () => {
  const all = await tables();
  assert.ok(all.includes('products') && all.includes('product_history'), all.join(', '));
  for (const name of Object.keys(NOT_TENANT_TABLES)) assert.ok(all.includes(name), `${name} is gone`);
  const rows = await svc.service.db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
       AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                       WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
     ORDER BY 1`,
  );
  assert.deepEqual(
    rows.map((row) => row.name),
    Object.keys(NOT_TENANT_TABLES).sort(),
  );
});

void test('every primary key and unique index of a tenant table includes tenant_id', async () => {
  const rows = await svc.service.db.query<{ index: string; table: string }>(
    `SELECT i.indexrelid::regclass::text AS index, c.relname AS table
     FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND i.indisunique
       AND c.relname <> ALL ($1::text[])
       AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                       WHERE a.attrelid = c.oid AND a.attname = 'tenant_id'
                         AND a.attnum = ANY (i.indkey::int2[]))
     ORDER BY 1`,
    [Object.keys(NOT_TENANT_TABLES)],
  );
  assert.deepEqual(rows, []);
  const [{ count } = { count: 0 }] = await svc.service.db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND i.indisprimary`,
  );
  assert.ok(count >= 10, `only ${count} primary keys were read`);
});

void test('every foreign key joins tenant_id to tenant_id', async () => {
  const rows = await svc.service.db.query<{
    name: string;
    table: string;
    columns: string[];
    referenced: string[];
  }>(
    `SELECT con.conname AS name, c.relname AS table,
            ARRAY(SELECT a.attname::text FROM unnest(con.conkey) k JOIN pg_attribute a
                  ON a.attrelid = con.conrelid AND a.attnum = k) AS columns,
            ARRAY(SELECT a.attname::text FROM unnest(con.confkey) k JOIN pg_attribute a
                  ON a.attrelid = con.confrelid AND a.attnum = k) AS referenced
     FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
     WHERE con.contype = 'f' AND c.relnamespace = current_schema()::regnamespace
     ORDER BY 1`,
  );
  assert.ok(rows.length >= 4, `only ${rows.length} foreign keys were read`);
  for (const { name, table, columns, referenced } of rows) {
    const at = columns.indexOf('tenant_id');
    assert.ok(
      at !== -1 && referenced[at] === 'tenant_id',
      `${table}.${name}: (${columns.join()}) → (${referenced.join()})`,
    );
  }
});
