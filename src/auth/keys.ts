import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createPublicKey } from 'node:crypto';
import { createRemoteJWKSet, importSPKI, type JWTVerifyGetKey, type CryptoKey } from 'jose';
import { ConfigError, type Config } from '../config.ts';

/** The keys bearer tokens are verified with: a shared secret, asymmetric keys, or both. */
export interface VerificationKeys {
  secret: Uint8Array | undefined;
  asymmetric: { key: CryptoKey | JWTVerifyGetKey; algorithms: string[] } | undefined;
}

const SECRET_FILE = 'auth-jwt-secret';

/** Where the development secret lives: generated once, kept with the embedded data. */
export function devSecretPath(dataDir: string): string {
  return path.join(dataDir, SECRET_FILE);
}

/**
 * The HS256 secret in force: `AUTH_JWT_SECRET`, else (outside production, when no asymmetric key is
 * configured either) one generated on first use and kept in `DATA_DIR`.
 */
export async function resolveSecret(
  config: Config,
  { create }: { create: boolean },
): Promise<string | undefined> {
  if (config.auth.jwtSecret) return config.auth.jwtSecret;
  if (config.auth.jwksUrl || config.auth.publicKey) return undefined;
  if (config.nodeEnv === 'production') {
    throw new ConfigError(
      'No token verification key: set AUTH_JWT_SECRET, AUTH_JWKS_URL or AUTH_JWT_PUBLIC_KEY (required in production).',
    );
  }
  const file = devSecretPath(config.dataDir);
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !create) throw error;
  }
  await fs.mkdir(config.dataDir, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  try {
    await fs.writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return (await fs.readFile(file, 'utf8')).trim();
    throw error;
  }
}

/** The JWS algorithm that fits a PEM public key (RSA → RS256, EC P-256 → ES256, Ed25519 → EdDSA). */
function algorithmOf(pem: string): string {
  const key = createPublicKey(pem);
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1') return 'ES256';
      if (curve === 'secp384r1') return 'ES384';
      throw new ConfigError(`AUTH_JWT_PUBLIC_KEY uses an unsupported curve ${curve ?? ''}`);
    }
    case 'ed25519':
      return 'EdDSA';
    case 'dsa':
    case 'ed448':
    case 'rsa-pss':
    case 'x25519':
    case 'x448':
    case undefined:
      throw new ConfigError('AUTH_JWT_PUBLIC_KEY must be an RSA, EC or Ed25519 public key');
  }
}

/**
 * How long a key set fetched from `AUTH_JWKS_URL` is used before it is fetched again (jose's default,
 * stated here so that the docs can rely on it). A key withdrawn from the set stops verifying new
 * tokens within this time; tokens already verified are remembered up to 60 s longer (verify-token.ts).
 */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/** Loads every configured verification key (CONTRACT §1, §3). */
export async function loadVerificationKeys(config: Config): Promise<VerificationKeys> {
  const secret = await resolveSecret(config, { create: true });
  let asymmetric: VerificationKeys['asymmetric'];
  if (config.auth.jwksUrl) {
    asymmetric = {
      key: createRemoteJWKSet(new URL(config.auth.jwksUrl), { cacheMaxAge: JWKS_MAX_AGE_MS }),
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'],
    };
  } else if (config.auth.publicKey) {
    const pem = config.auth.publicKey.replace(/\\n/g, '\n');
    const algorithm = algorithmOf(pem);
    asymmetric = { key: await importSPKI(pem, algorithm), algorithms: [algorithm] };
  }
  return { secret: secret ? new TextEncoder().encode(secret) : undefined, asymmetric };
}
