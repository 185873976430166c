import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (docs/reference.md §10.1): a secret is `whsec_` + base64 of 32 random bytes, and
 * a signature is `v1,` + base64(HMAC-SHA256(key, `<webhook-id>.<webhook-timestamp>.<body>`)) where
 * the key is the secret's base64 part, decoded.
 */

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret. */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** One `v1,` signature of a message with `secret`. */
export function sign(secret: string, message: { id: string; timestamp: number; body: string }): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${message.id}.${message.timestamp}.${message.body}`);
  return `v1,${mac.digest('base64')}`;
}

/**
 * The `webhook-signature` header: one signature per secret that signs now, space-separated, the
 * current secret's first (during a rotation's 24 h both the new and the previous secret sign).
 */
export function signatureHeader(
  secrets: readonly string[],
  message: { id: string; timestamp: number; body: string },
): string {
  return secrets.map((secret) => sign(secret, message)).join(' ');
}
