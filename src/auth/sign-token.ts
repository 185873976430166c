import { SignJWT } from 'jose';
import { ConfigError, type Config } from '../config.ts';
import { resolveSecret } from './keys.ts';

/** What a minted token says: whose it is, what it may do, and for how long. */
export interface TokenRequest {
  tenant: string;
  /** Space-separated scopes. */
  scope: string;
  ttlSeconds: number;
  /** Create the development secret in `DATA_DIR` if the service has not created it yet. */
  createSecret: boolean;
}

/**
 * Signs an HS256 bearer token with the service's own secret (`AUTH_JWT_SECRET`, or the development
 * secret in `DATA_DIR`), carrying the configured tenant claim, issuer and audience, so the service
 * accepts it. Shared by `npm run token` and `npm run ingest -- --tenant`.
 */
export async function signServiceToken(config: Config, request: TokenRequest): Promise<string> {
  let secret: string | undefined;
  try {
    secret = await resolveSecret(config, { create: request.createSecret });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new ConfigError(
      `No token secret in ${config.dataDir}: set AUTH_JWT_SECRET, or start the service once with this DATA_DIR.`,
    );
  }
  if (!secret) throw new ConfigError('Minting a token needs the shared secret: set AUTH_JWT_SECRET.');
  let jwt = new SignJWT({ [config.auth.tenantClaim]: request.tenant, scope: request.scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(`${request.ttlSeconds}s`);
  if (config.auth.issuer) jwt = jwt.setIssuer(config.auth.issuer);
  if (config.auth.audience) jwt = jwt.setAudience(config.auth.audience);
  return jwt.sign(new TextEncoder().encode(secret));
}
