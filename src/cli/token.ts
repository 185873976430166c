import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { signServiceToken } from '../auth/sign-token.ts';
import { devSecretPath } from '../auth/keys.ts';
import { ALL_SCOPES } from '../auth/verify-token.ts';
import { runCommand, UsageError } from './command.ts';

/**
 * `npm run token -- --tenant acme [--scope "ingestions:read"] [--ttl 3600]` prints a bearer token
 * signed with the service's HS256 secret: AUTH_JWT_SECRET, or the development secret in DATA_DIR
 * (created now if the service has not created it yet).
 */

const USAGE = `usage: npm run token -- --tenant <tenant> [options]
  --tenant <tenant>      the tenant the token is for (its tenant_id claim)
  --scope "<scopes>"     space-separated scopes (default: all of them)
  --ttl <seconds>        lifetime (default 3600)
Scopes: ${ALL_SCOPES}.
Signs with AUTH_JWT_SECRET, else with the development secret in DATA_DIR (created if missing).`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      tenant: { type: 'string' },
      scope: { type: 'string', default: ALL_SCOPES },
      ttl: { type: 'string', default: '3600' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!values.tenant) throw new UsageError('--tenant is required');
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError('--ttl must be a positive number of seconds');
  const config = loadConfig();
  // A development secret made now was never seen by a running service: one that runs with
  // AUTH_JWT_SECRET (as several processes on a server do) or another DATA_DIR refuses this token with
  // a bare 401. (Should another process create the file at the same moment, the note is said anyway.)
  const secretFile = devSecretPath(config.dataDir);
  const newSecret = !config.auth.jwtSecret && !existsSync(secretFile);
  const token = await signServiceToken(config, {
    tenant: values.tenant,
    scope: values.scope,
    ttlSeconds: ttl,
    createSecret: true,
  });
  if (newSecret && existsSync(secretFile)) {
    process.stderr.write(
      `token: signed with a development secret created now in ${secretFile}; a service that uses AUTH_JWT_SECRET or another DATA_DIR refuses it: give this command the same setting.\n`,
    );
  }
  process.stdout.write(`${token}\n`);
  return 0;
}

await runCommand('token', USAGE, main);
