import { test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseUnavailableReason } from '../../src/db/database-unavailable.ts';

/** Which database errors answer 503 (and leave batches for a retry) and which stay 500s. */

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('read-only, full, shutting-down and connection errors are "unavailable"; the rest are not', () => {
  assert.deepEqual(
    [
      withCode('25006', 'cannot execute INSERT in a read-only transaction'),
      withCode('53100', 'could not extend file: No space left on device'),
      withCode('53300'),
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('57P03', 'the database system is starting up'),
      withCode('08006'),
      withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      withCode('EPIPE', 'write EPIPE'),
      new Error('Connection terminated unexpectedly'),
    ].map(databaseUnavailableReason),
    [
      'read_only_sql_transaction',
      'disk_full',
      'too_many_connections',
      'admin_shutdown',
      'cannot_connect_now',
      'connection_exception',
      'connection_failure',
      'connection_failure',
      'connection_failure',
    ],
  );
  // A SQLSTATE decides by itself: a data error whose text happens to say "connect" is still the data's.
  assert.deepEqual(
    [
      withCode('23505', 'duplicate key value violates unique constraint'),
      withCode('22P02', 'invalid input syntax for type json: "connect"'),
      withCode('42P01', 'relation "x" does not exist'),
      new Error('something else broke'),
      'a string',
      null,
    ].map(databaseUnavailableReason),
    [null, null, null, null, null, null],
  );
});
