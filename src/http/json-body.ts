import type { FastifyInstance } from 'fastify';
import { AppError, ValidationError } from './errors.ts';

/** Deepest JSON nesting a body may have (CONTRACT §2); deeper bodies are refused before storage. */
export const MAX_JSON_DEPTH = 64;

/** The nesting depth of a parsed JSON value, stopping early once it exceeds `limit`. */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  // Iterative, so a hostile body cannot overflow the stack.
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Parsed JSON together with its source text, which the submission stores without re-serializing. */
export interface RawJson {
  text: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The body's exact JSON text, kept for routes that store it as sent. */
    rawJson?: RawJson;
  }
}

/**
 * Replaces Fastify's JSON parser: any `application/json` (charset allowed) body is parsed with
 * `JSON.parse` (an own `__proto__` key stays a plain property), its depth is checked, and its text is
 * kept on the request. Other media types fall through to Fastify's 415.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/json(\s*;.*)?$/i, { parseAs: 'string' }, (request, body, done) => {
    // JSON is UTF-8 (RFC 8259); a body declared in another charset would be misread, so refuse it.
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset && !/^utf-?8$/i.test(charset)) {
      done(new AppError('unsupported-media-type', `JSON bodies must be UTF-8, not ${charset}.`), undefined);
      return;
    }
    const text = body as string;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      done(new AppError('malformed-json', 'The request body is not valid JSON.'), undefined);
      return;
    }
    if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) {
      done(
        new ValidationError([
          {
            field: '',
            code: 'out_of_range',
            message: `JSON nesting is deeper than ${MAX_JSON_DEPTH} levels.`,
          },
        ]),
        undefined,
      );
      return;
    }
    request.rawJson = { text };
    done(null, value);
  });
}
