import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCli } from '../helpers/ingest-cli.ts';

const token = (...args: string[]) => runCli('src/cli/token.ts', args);

const USAGE = `usage: npm run token -- --tenant <tenant> [options]
  --tenant <tenant>      the tenant the token is for (its tenant_id claim)
  --scope "<scopes>"     space-separated scopes (default: all of them)
  --ttl <seconds>        lifetime (default 3600)
Scopes: ingestions:write ingestions:read catalog:read analysis:run catalog:write webhooks:manage.
Signs with AUTH_JWT_SECRET, else with the development secret in DATA_DIR (created if missing).
`;

void describe('npm run token: how it is called', () => {
  void test('--help prints the usage on stdout, exit 0', async () => {
    assert.deepEqual(await token('--help'), { code: 0, stdout: USAGE, stderr: '' });
    assert.deepEqual(await token('-h'), { code: 0, stdout: USAGE, stderr: '' });
  });

  void test('an unknown option, a missing tenant or a bad --ttl: one line and the usage on stderr, exit 1', async () => {
    assert.deepEqual(await token('--tenat', 'acme'), {
      code: 1,
      stdout: '',
      stderr: `token: Unknown option '--tenat'\n${USAGE}`,
    });
    assert.deepEqual(await token(), { code: 1, stdout: '', stderr: `token: --tenant is required\n${USAGE}` });
    assert.deepEqual(await token('--tenant', 'acme', '--ttl', '0'), {
      code: 1,
      stdout: '',
      stderr: `token: --ttl must be a positive number of seconds\n${USAGE}`,
    });
  });
});
