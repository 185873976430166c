import { UUID } from '../db/uuid.ts';
import { ValidationError } from '../errors/app-errors.ts';

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

const ISO_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A keyset position in a list ordered by creation time and id: the last listed row's own values. */
export interface TimePosition {
  createdAt: string;
  id: string;
}

/** The cursor of `scope` after the row created at `createdAt` with `id`. */
export function encodeTimeCursor(scope: string, position: TimePosition): string {
  return encodeCursor(scope, `${position.createdAt} ${position.id}`);
}

/**
 * Reads a cursor of {@link encodeTimeCursor}: an ISO timestamp with milliseconds and a UUID, both
 * of the tenant's own rows (a global sequence number would tell a tenant how busy the others are).
 */
export function decodeTimeCursor(cursor: string, scope: string): TimePosition {
  const [createdAt = '', id = '', ...rest] = decodeCursor<string>(cursor, scope, 'string').split(' ');
  const time = Date.parse(createdAt);
  if (
    rest.length > 0 ||
    !ISO_MILLISECONDS.test(createdAt) ||
    // Every row was created after 1970; PostgreSQL refuses some earlier years (0000) outright.
    !(time >= 0) ||
    new Date(time).toISOString() !== createdAt ||
    !UUID.test(id)
  ) {
    throw invalidCursor();
  }
  return { createdAt, id };
}
