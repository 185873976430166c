import { randomUUID } from 'node:crypto';
import { STATUS_CODES, maxHeaderSize, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { ProblemSlug } from '../errors/app-errors.ts';
import { pathOfTarget, problemBody } from './problem.ts';

/** What Node's parser reports (a `clientError` event), as Fastify's option types it. */
interface ClientError extends Error {
  code?: string;
}

/** Node's private field for the response in flight on a socket; it guards its own answer with it. */
interface HttpSocket extends Socket {
  _httpMessage?: ServerResponse | null;
}

/** How long an answer may wait to be read before its connection is cut. */
const UNREAD_ANSWER_MS = 5_000;

/** What Node's parser takes of a body's chunk extensions (llhttp's fixed limit, 16 KiB), which a 413 names. */
const CHUNK_EXTENSIONS_LIMIT = 16 * 1024;

/** Node's status for each parser error (lib/_http_server.js), with the closed slug that fits it. */
function answerFor(code: string): { status: number; slug: ProblemSlug; detail: string } {
  switch (code) {
    // The slug list is closed (docs/reference.md §2): a header block too large is a request too large, so it
    // is `payload-too-large` with Node's 431; anything else unreadable is a 400 `validation-error`,
    // as the framework's other unreadable requests are (error-handler.ts).
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        slug: 'payload-too-large',
        detail: `The request header fields are larger than this server accepts: at most ${maxHeaderSize} bytes in all.`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        slug: 'payload-too-large',
        detail: `The chunk extensions of the request body are larger than this server accepts: at most ${CHUNK_EXTENSIONS_LIMIT} bytes in all.`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        slug: 'validation-error',
        detail: 'The request was not received completely in time.',
      };
    default:
      return { status: 400, slug: 'validation-error', detail: 'The request is not well-formed HTTP.' };
  }
}

/**
 * Answers requests Node's HTTP parser rejects before Fastify sees them (oversized headers, a bad
 * request line, a timeout) as problem+json with a new `X-Request-Id`, then closes the connection.
 */
export function clientErrorHandler(publicBaseUrl: string) {
  return function (this: FastifyInstance, error: ClientError, socket: Socket): void {
    const inFlight = (socket as HttpSocket)._httpMessage;
    // Like Node: once a response has begun on this socket, any bytes written would corrupt it.
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, slug, detail } = answerFor(error.code ?? '');
    // A request Node already parsed (e.g. a body that timed out) has a known path; else there is none.
    const instance = pathOfTarget(inFlight?.req.url ?? '/');
    // The caller's own id sits in the bytes that could not be parsed, so it cannot be trusted.
    const requestId = randomUUID();
    const body = JSON.stringify({ ...problemBody(publicBaseUrl, slug, detail, instance), status });
    this.log.debug({ reqId: requestId, code: error.code }, 'client error');
    socket.end(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
        'Content-Type: application/problem+json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
      // The parser cannot resume after an error: the connection ends once the answer is flushed.
      () => socket.destroy(),
    );
    // A client that stops reading would otherwise keep the socket open until it gave up.
    setTimeout(() => socket.destroy(), UNREAD_ANSWER_MS).unref();
  };
}
