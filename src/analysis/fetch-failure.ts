import { isTlsFailure } from '../net/pinned-host.ts';

/**
 * Why an image could not be fetched, in the words its entry's `details` carries: one sentence a
 * person can act on, never Node's own message.
 */

/** Why an image could not be fetched; `details` of the image's entry is the error's message. */
export type FetchFailureKind =
  | 'invalid-url'
  | 'unsupported-scheme'
  | 'host-not-found'
  | 'blocked-address'
  | 'too-many-redirects'
  | 'bad-redirect'
  | 'http-status'
  | 'not-an-image'
  | 'too-large'
  | 'timeout'
  | 'network';

/** A URL that could not be fetched as an image; the message is one sentence a person can act on. */
export class FetchFailure extends Error {
  readonly kind: FetchFailureKind;

  constructor(kind: FetchFailureKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

/** The failure an error of a fetch stands for; a {@link FetchFailure} is passed on as it is. */
export function toFetchFailure(error: unknown, timeout: AbortSignal, timeoutMs: number): FetchFailure {
  if (error instanceof FetchFailure) return error;
  if (timeout.aborted)
    return new FetchFailure('timeout', `Timed out after ${timeoutMs / 1000} s fetching the image`);
  const code = (error as { code?: unknown }).code;
  if (code === 'UND_ERR_ABORTED' || (error as Error).name === 'AbortError') {
    return new FetchFailure('timeout', 'The fetch was cancelled');
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new FetchFailure(
      'timeout',
      `Timed out after ${timeoutMs / 1000} s connecting to the image server`,
    );
  }
  return new FetchFailure('network', `Could not download the image: ${networkReason(code)}`);
}

/**
 * A network error in words a person can act on. Never the error's own message: Node's messages name the
 * address the host resolved to (`connect ECONNREFUSED 10.1.2.3:443`), which is none of the caller's
 * business when it is refused, and means nothing to one who only sent a URL.
 */
function networkReason(code: unknown): string {
  if (typeof code !== 'string') return 'the connection failed';
  if (code === 'ECONNREFUSED') return 'the image server refused the connection';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') {
    return 'the image server closed the connection before the image was sent';
  }
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') {
    return 'the image server cannot be reached from here';
  }
  if (code.startsWith('HPE_') || code === 'UND_ERR_INFO' || code.startsWith('UND_ERR_RES')) {
    return 'the image server did not answer in valid HTTP';
  }
  if (isTlsFailure(code)) return `its secure (TLS) connection failed (${code})`;
  return `the connection failed (${code})`;
}
