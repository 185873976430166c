import { request, type Dispatcher } from 'undici';
import { blockedCategory } from '../net/address-policy.ts';
import {
  abortable,
  checkHost,
  createPinnedAgent,
  HostRefusedError,
  isTlsFailure,
  type ResolveHost,
} from '../net/pinned-host.ts';

/** One webhook request as sent: where, which headers, which bytes. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What an attempt heard: a status code, or why there was none (`error`, words a person can act on). */
export type AttemptAnswer = { statusCode: number } | { statusCode: null; error: string };

/** Sends one webhook request; never throws. */
export type SendWebhook = (message: WebhookRequest) => Promise<AttemptAnswer>;

/** A 2xx answer within this time delivers (docs/reference.md §10.1); the whole attempt, DNS included. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** The most of an answer's body that is read: only its status counts, the rest is drained no further. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Creates the sender of webhook requests: the URL's host is checked with the analyzer's address
 * policy and the connection pinned to the checked address (net/pinned-host.ts); redirects are not
 * followed (a 3xx is an answer like any non-2xx); at most 64 KiB of the answer is read.
 */
export function createWebhookSender(options: {
  allowPrivateHosts: boolean;
  userAgent: string;
  timeoutMs?: number;
  resolveHost?: ResolveHost;
}): SendWebhook {
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const policy = (address: string) => blockedCategory(address, options.allowPrivateHosts);

  return async (message) => {
    const signal = AbortSignal.timeout(timeoutMs);
    const pinned = createPinnedAgent(timeoutMs);
    try {
      const url = new URL(message.url);
      pinned.pin(
        url.hostname,
        await abortable(checkHost(url, { policy, resolveHost: options.resolveHost }), signal),
      );
      const response = await request(url, {
        method: 'POST',
        dispatcher: pinned.agent,
        signal,
        headers: { ...message.headers, 'content-type': 'application/json', 'user-agent': options.userAgent },
        body: message.body,
      });
      await readCapped(response.body, MAX_ANSWER_BYTES);
      return { statusCode: response.statusCode };
    } catch (error) {
      return { statusCode: null, error: reasonOf(error, signal, timeoutMs) };
    } finally {
      pinned.close();
    }
  };
}

/** Reads up to `maxBytes` of a body and drops the rest unread. */
async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<void> {
  let size = 0;
  // undici yields Buffers; its iterator type says `any`.
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size >= maxBytes) break;
  }
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * Why an attempt heard no answer, for the delivery's `last_error`. Never Node's own message: it
 * names the address a host resolved to, which a tenant has no business learning.
 */
function reasonOf(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (error instanceof HostRefusedError) return error.message;
  if (signal.aborted) return `No answer within ${timeoutMs / 1000} s`;
  const code = (error as { code?: unknown }).code;
  if (code === 'ERR_INVALID_URL') return 'Not a valid URL';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return `Could not connect within ${timeoutMs / 1000} s`;
  if (code === 'ECONNREFUSED') return 'The endpoint refused the connection';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') {
    return 'The endpoint closed the connection before answering';
  }
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') {
    return 'The endpoint cannot be reached from here';
  }
  if (typeof code === 'string' && (code.startsWith('HPE_') || code.startsWith('UND_ERR_RES'))) {
    return 'The endpoint did not answer in valid HTTP';
  }
  if (typeof code === 'string' && isTlsFailure(code)) {
    return `The secure (TLS) connection failed (${code})`;
  }
  return typeof code === 'string' ? `The connection failed (${code})` : 'The connection failed';
}
