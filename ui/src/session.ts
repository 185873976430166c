/** The signed-in token and what its payload says; the token lives in sessionStorage only. */
export interface Session {
  token: string;
  tenant: string | null;
  scopes: string[];
  expiresAt: Date | null;
}

const KEY = 'catalog-dashboard.token';
/** The service's default tenant claim (docs/reference.md §3, AUTH_TENANT_CLAIM). */
const TENANT_CLAIMS = ['tenant_id', 'tenant'];

/**
 * Reads a JWT's payload without verifying it: the page only shows what the token claims; the
 * service verifies it on every call. Throws a message a person can act on when it is not a JWT.
 */
export function decodeToken(raw: string): Session {
  const token = raw.trim().replace(/^bearer\s+/i, '');
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part)))
    throw new Error('This is not a JWT: expected three base64url parts separated by dots.');
  let payload: Record<string, unknown>;
  try {
    const base64 = parts[1]!.replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    payload = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  } catch {
    throw new Error('The token’s payload is not readable JSON.');
  }
  const claim = TENANT_CLAIMS.map((name) => payload[name]).find((value) => typeof value === 'string');
  const scopes =
    typeof payload.scope === 'string'
      ? payload.scope.split(' ').filter(Boolean)
      : Array.isArray(payload.scp)
        ? payload.scp.filter((scope): scope is string => typeof scope === 'string')
        : [];
  return {
    token,
    tenant: typeof claim === 'string' && claim !== '' ? claim : null,
    scopes,
    expiresAt: typeof payload.exp === 'number' ? new Date(payload.exp * 1000) : null,
  };
}

/** The current session, or null when signed out (or the stored token no longer decodes). */
export function currentSession(): Session | null {
  const token = sessionStorage.getItem(KEY);
  if (!token) return null;
  try {
    return decodeToken(token);
  } catch {
    return null;
  }
}

/** Decodes and keeps `raw` for this tab; throws as `decodeToken` does. */
export function signIn(raw: string): Session {
  const session = decodeToken(raw);
  sessionStorage.setItem(KEY, session.token);
  return session;
}

/** Forgets the token. */
export function signOut(): void {
  sessionStorage.removeItem(KEY);
}
