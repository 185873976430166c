import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got: its headers and body as sent. */
export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * How the receiver answers a request: a status code, `hang` (never answer until closed), or a
 * promise of a status code (answer when the test says so).
 */
export type Answer = number | 'hang' | Promise<number>;

/** A real HTTP server on loopback that records the webhooks it receives (docs/reference.md §10.1 tests). */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Answers of the next requests, in order; once used up, `fallback` answers. */
  answers: Answer[];
  fallback: Answer;
  /** Called when a request has arrived, before it is answered. */
  onRequest?: (request: ReceivedWebhook) => void;
  /** Resolves once `count` requests arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 at `path`. */
export async function startReceiver(path = '/hooks'): Promise<WebhookReceiver> {
  const hanging = new Set<http.ServerResponse>();
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    answers: [],
    fallback: 204,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.received.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`expected ${count} webhooks, got ${receiver.received.length}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return receiver.received.slice(0, count);
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const got = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      receiver.received.push(got);
      receiver.onRequest?.(got);
      const answer = receiver.answers.shift() ?? receiver.fallback;
      if (answer === 'hang') {
        hanging.add(response);
        return;
      }
      const reply = (status: number) =>
        response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      if (typeof answer === 'number') return void reply(answer);
      hanging.add(response);
      void answer.then((status) => {
        hanging.delete(response);
        if (!response.destroyed) reply(status);
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}

/**
 * Verifies a webhook as a receiver would (Standard Webhooks, with node:crypto only): true when one
 * of the space-separated `v1,` signatures is the HMAC-SHA256 of `id.timestamp.body` with `secret`.
 */
export function verifies(secret: string, received: ReceivedWebhook): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const id = String(received.headers['webhook-id']);
  const timestamp = String(received.headers['webhook-timestamp']);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${received.body}`).digest('base64');
  return String(received.headers['webhook-signature'])
    .split(' ')
    .some((signature) => signature === `v1,${expected}`);
}
