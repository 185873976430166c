import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { AppError, UnsupportedContentEncodingError, ValidationError } from '../errors/app-errors.ts';
import { utf8DefectAt } from '../runtime/utf8-defect.ts';
import { JsonSyntaxError, JsonTooDeepError, lineAndColumn, outlineJson } from './json-outline.ts';

/** Deepest JSON nesting a body may have (docs/reference.md §2); deeper bodies are refused before storage. */
export const MAX_JSON_DEPTH = 64;

/**
 * Arrays in an outline are counted up to this length (and one more). The routes that validate an
 * outline allow far fewer elements (the ingestion envelope: 1000 items), so a longer array is refused
 * by its schema all the same, and a body of millions of elements costs no stand-in for each.
 */
const OUTLINE_MAX_ARRAY_LENGTH = 100_000;

/** The exact bytes of a JSON body (UTF-8), kept for routes that store it as sent. */
export interface RawJson {
  bytes: Buffer;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The body's JSON bytes, on routes whose config asks for `bodyOutline`. */
    rawJson?: RawJson;
  }
  interface FastifyContextConfig {
    /**
     * The route validates only the outline of its JSON body (`outlineJson`: the top-level value and
     * its members' types and lengths) and reads the body itself from `request.rawJson`, unparsed.
     */
    bodyOutline?: boolean;
  }
}

/** Where a body stops being JSON (docs/reference.md §11.8: line and column, 1-based), and what is there. */
function malformedJsonDetail(bytes: Buffer, error: unknown): string {
  if (!(error instanceof JsonSyntaxError)) return 'The request body is not valid JSON.';
  const { line, column } = lineAndColumn(bytes, error.offset);
  const where = `line ${line}, column ${column}`;
  if (error.offset >= bytes.length) return `The request body is not valid JSON: it ends early, at ${where}.`;
  const codePoint = bytes
    .subarray(error.offset, error.offset + 4)
    .toString('utf8')
    .codePointAt(0)!;
  // A control character, a space or a byte order mark shows as its code point; anything else as itself.
  const what =
    codePoint <= 0x20 || (codePoint >= 0x7f && codePoint <= 0xa0) || codePoint === 0xfeff
      ? `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`
      : `'${String.fromCodePoint(codePoint)}'`;
  return `The request body is not valid JSON: unexpected character ${what} at ${where}.`;
}

/**
 * Why a body that is not UTF-8 is refused (docs/api-conventions.md): the first byte that is not, at
 * its 0-based byte offset, and its line and column as a malformed body's are named.
 */
function notUtf8Detail(bytes: Buffer): string {
  const offset = Math.max(0, utf8DefectAt(bytes));
  const { line, column } = lineAndColumn(bytes, offset);
  const byte = `0x${bytes[offset]!.toString(16).toUpperCase().padStart(2, '0')}`;
  return (
    `The request body is not UTF-8: byte ${byte} at byte offset ${offset} (line ${line}, column ${column}) ` +
    'is not a UTF-8 character. Send JSON as UTF-8.'
  );
}

/**
 * Replaces Fastify's JSON parser: any `application/json` (charset allowed) body is checked by the
 * scanner of `json-outline.ts` (syntax exactly as `JSON.parse`, then depth), then parsed with
 * `JSON.parse` (an own `__proto__` key stays a plain property) — or, on a route with `bodyOutline`,
 * not parsed at all: the route gets the outline as its body and the bytes on the request. Other media
 * types fall through to Fastify's 415.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/json(\s*;.*)?$/i, { parseAs: 'buffer' }, (request, body, done) => {
    // A compressed body is not decompressed: read as JSON it would be malformed, which it is not.
    const encoding = request.headers['content-encoding']?.trim();
    if (encoding && !/^identity$/i.test(encoding)) {
      done(new UnsupportedContentEncodingError(encoding), undefined);
      return;
    }
    // JSON is UTF-8 (RFC 8259); a body declared in another charset would be misread, so refuse it.
    // US-ASCII is UTF-8's first 128 characters, so a body declared in it is read as UTF-8.
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset && !/^(utf-?8|us-ascii)$/i.test(charset)) {
      done(new AppError('unsupported-media-type', `JSON bodies must be UTF-8, not ${charset}.`), undefined);
      return;
    }
    const bytes = body as Buffer;
    // JSON is UTF-8 (RFC 8259): a byte that is not is refused, never stored as U+FFFD in its place.
    if (!isUtf8(bytes)) {
      done(new AppError('malformed-json', notUtf8Detail(bytes)), undefined);
      return;
    }
    let outline: unknown;
    try {
      outline = outlineJson(bytes, { maxDepth: MAX_JSON_DEPTH, maxArrayLength: OUTLINE_MAX_ARRAY_LENGTH });
    } catch (error) {
      done(
        error instanceof JsonTooDeepError
          ? // docs/reference.md §4 names an envelope error by `items` or the unknown property: the member the
            // nesting is in, or `items` for a body that is not an object (of the operations with a
            // JSON body, only the submission's 400s name fields; the analyzer's shape has none).
            new ValidationError([
              { field: error.member ?? 'items', code: 'out_of_range', message: error.message },
            ])
          : new AppError('malformed-json', malformedJsonDetail(bytes, error)),
        undefined,
      );
      return;
    }
    if (request.routeOptions.config.bodyOutline) {
      request.rawJson = { bytes };
      done(null, outline);
    } else {
      done(null, JSON.parse(bytes.toString('utf8')));
    }
  });
}
