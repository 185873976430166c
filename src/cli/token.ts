import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { signServiceToken } from '../auth/sign-token.ts';
import { SCOPES } from '../auth/verify-token.ts';

/**
 * `npm run token -- --tenant acme [--scope "ingestions:read"] [--ttl 3600]` prints a bearer token
 * signed with the service's HS256 secret: AUTH_JWT_SECRET, or the development secret in DATA_DIR
 * (created now if the service has not created it yet).
 */
const { values } = parseArgs({
  options: {
    tenant: { type: 'string' },
    scope: { type: 'string', default: Object.values(SCOPES).join(' ') },
    ttl: { type: 'string', default: '3600' },
  },
});

try {
  if (!values.tenant)
    throw new ConfigError('usage: npm run token -- --tenant <tenant> [--scope "a b"] [--ttl seconds]');
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl <= 0) throw new ConfigError('--ttl must be a positive number of seconds');
  const token = await signServiceToken(loadConfig(), {
    tenant: values.tenant,
    scope: values.scope,
    ttlSeconds: ttl,
    createSecret: true,
  });
  process.stdout.write(`${token}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
