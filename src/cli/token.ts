import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { ConfigError, loadConfig } from '../config.ts';
import { resolveSecret } from '../auth/keys.ts';
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
  const config = loadConfig();
  const secret = await resolveSecret(config, { create: true });
  if (!secret) throw new ConfigError('npm run token signs with a shared secret: set AUTH_JWT_SECRET.');
  let jwt = new SignJWT({ [config.auth.tenantClaim]: values.tenant, scope: values.scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(`${ttl}s`);
  if (config.auth.issuer) jwt = jwt.setIssuer(config.auth.issuer);
  if (config.auth.audience) jwt = jwt.setAudience(config.auth.audience);
  process.stdout.write(`${await jwt.sign(new TextEncoder().encode(secret))}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
