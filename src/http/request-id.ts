import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** What a caller's `X-Request-Id` may be made of to be echoed (the OpenAPI document shows the same). */
export const REQUEST_ID_RULE = { pattern: '^[A-Za-z0-9._~:@+=-]+$', maxLength: 128 } as const;

const SAFE_REQUEST_ID = new RegExp(REQUEST_ID_RULE.pattern);

/** The caller's `X-Request-Id` when it is at most 128 safe characters, else a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && sent.length <= REQUEST_ID_RULE.maxLength && SAFE_REQUEST_ID.test(sent)
    ? sent
    : randomUUID();
}
