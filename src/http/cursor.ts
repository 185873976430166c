import { ValidationError } from './errors.ts';

/**
 * Opaque pagination cursors: the list they belong to (`scope`) and the position after which the
 * next page starts, base64url-encoded. A cursor is only a position, never a permission: every query
 * it feeds is still scoped to the caller's tenant.
 */
export function encodeCursor(scope: string, position: string | number): string {
  return Buffer.from(JSON.stringify([scope, position])).toString('base64url');
}

/** The 400 for a cursor that is not a position this service issued for the list. */
export function invalidCursor(): ValidationError {
  return new ValidationError([
    { field: 'cursor', code: 'invalid_value', message: 'cursor is not a next_cursor of this list.' },
  ]);
}

/** Reads a cursor of `scope`; a malformed one or one from another list is a 400 on `cursor`. */
export function decodeCursor<T extends string | number>(
  cursor: string,
  scope: string,
  kind: T extends number ? 'number' : 'string',
): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || parsed[0] !== scope || typeof parsed[1] !== kind) {
    throw invalidCursor();
  }
  if (kind === 'number' && !Number.isSafeInteger(parsed[1])) throw invalidCursor();
  // No position this service issues holds U+0000 (no stored key can), and PostgreSQL text cannot.
  if (kind === 'string' && (parsed[1] as string).includes('\u0000')) throw invalidCursor();
  // Base64url decoding skips characters outside its alphabet: only the exact text this service
  // issued is a cursor, not one with something added to it.
  if (encodeCursor(scope, parsed[1] as string | number) !== cursor) throw invalidCursor();
  return parsed[1] as T;
}
