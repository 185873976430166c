/** The embedded database's files are this user's alone: every tenant's data lives in them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadVerificationKeys } from '../../src/auth/keys.ts';
import { loadConfig } from '../../src/config.ts';
import { openEmbeddedDatabase } from '../../src/db/embedded-database.ts';

const modeOf = async (file: string) => (await fs.stat(file)).mode & 0o777;

void test('a new DATA_DIR and its database directory are created 0700', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'embedded-files-'));
  const dataDir = path.join(root, 'data');
  try {
    const db = await openEmbeddedDatabase(dataDir);
    try {
      assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
    } finally {
      await db.close();
    }
    assert.equal(await modeOf(dataDir), 0o700);
    assert.equal(await modeOf(path.join(dataDir, 'pglite')), 0o700);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

void test('a database directory others could enter is closed at the next start, its data kept', async () => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'embedded-files-'));
  try {
    const first = await openEmbeddedDatabase(dataDir);
    await first.exec('CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$still here$$)');
    await first.close();
    // As an older version left it.
    await fs.chmod(path.join(dataDir, 'pglite'), 0o755);

    const second = await openEmbeddedDatabase(dataDir);
    try {
      assert.equal(await modeOf(path.join(dataDir, 'pglite')), 0o700);
      assert.deepEqual(await second.query('SELECT v FROM kept'), [{ v: 'still here' }]);
    } finally {
      await second.close();
    }
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

void test('DATA_DIR is 0700 also when the development secret creates it first, as a start does', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'embedded-files-'));
  const dataDir = path.join(root, 'data');
  try {
    await loadVerificationKeys(loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir }));
    const db = await openEmbeddedDatabase(dataDir);
    await db.close();
    assert.equal(await modeOf(dataDir), 0o700);
    assert.equal(await modeOf(path.join(dataDir, 'auth-jwt-secret')), 0o600);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});
