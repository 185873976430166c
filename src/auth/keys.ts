import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createPublicKey } from 'node:crypto';
import { importSPKI, type JWTVerifyGetKey, type CryptoKey } from 'jose';
import { ConfigError, type Config } from '../config.ts';
import { createRemoteKeySet, type KeySetEvents } from './remote-keys.ts';

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
  // Only this user may enter DATA_DIR: the embedded database lives there too (embedded-database.ts).
  await fs.mkdir(config.dataDir, { recursive: true, mode: 0o700 });
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

/** HS256's shortest safe secret: as long as its hash (RFC 7518 §3.2), 32 bytes. */
export const MIN_SECRET_BYTES = 32;

/**
 * What production refuses besides a missing key: a secret short enough to guess (a one-character
 * secret lets anyone sign for any tenant) and a key set fetched over plain HTTP from another host
 * (anyone on the path could hand the service their own keys).
 */
function checkProductionKeys(config: Config): void {
  const { jwtSecret, jwksUrl } = config.auth;
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret) < MIN_SECRET_BYTES) {
    throw new ConfigError(
      `AUTH_JWT_SECRET must be at least ${MIN_SECRET_BYTES} bytes in production (HS256 needs a key as long as its hash); \`openssl rand -hex 32\` makes one`,
    );
  }
  if (jwksUrl !== undefined) {
    const url = URL.canParse(jwksUrl) ? new URL(jwksUrl) : undefined;
    const loopback = url && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    if (url?.protocol !== 'https:' && !(url?.protocol === 'http:' && loopback)) {
      throw new ConfigError('AUTH_JWKS_URL must be an https URL in production (http only on the loopback)');
    }
  }
}

/** Loads every configured verification key (docs/reference.md §1, §3); `events` hears of key-set outages. */
export async function loadVerificationKeys(
  config: Config,
  events: KeySetEvents = {
    onOutage: () => undefined,
    onStaleExpired: () => undefined,
    onRecovery: () => undefined,
  },
): Promise<VerificationKeys> {
  if (config.nodeEnv === 'production') checkProductionKeys(config);
  const secret = await resolveSecret(config, { create: true });
  let asymmetric: VerificationKeys['asymmetric'];
  if (config.auth.jwksUrl) {
    if (!URL.canParse(config.auth.jwksUrl)) throw new ConfigError('AUTH_JWKS_URL must be a URL');
    asymmetric = {
      key: createRemoteKeySet(new URL(config.auth.jwksUrl), events),
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'],
    };
  } else if (config.auth.publicKey) {
    const pem = config.auth.publicKey.replace(/\\n/g, '\n');
    const algorithm = algorithmOf(pem);
    asymmetric = { key: await importSPKI(pem, algorithm), algorithms: [algorithm] };
  }
  return { secret: secret ? new TextEncoder().encode(secret) : undefined, asymmetric };
}
