import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An answer of the stand-in service. */
export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One request the stand-in service received. */
export interface ReceivedRequest {
  method: string;
  url: string;
  body: string;
}

/** How the stand-in answers a request; a promise lets a test hold an answer back until an event. */
export type Handler = (request: ReceivedRequest) => Answer | Promise<Answer>;

/**
 * A stand-in for the service that answers as `handler` says, to drive the client through the answers
 * a real service gives only under load or failure (429, 5xx). Requests are recorded.
 */
export async function fakeService(handler: Handler) {
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, body };
      requests.push(request);
      void Promise.resolve(handler(request)).then((answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections would hold the close open for seconds.
        server.closeAllConnections();
      }),
  };
}

/** A problem answer with `detail`, and `errors[]` when given. */
export const problem = (status: number, detail: string, errors?: unknown[]): Answer => ({
  status,
  body: { title: 'x', status, detail, ...(errors ? { errors } : {}) },
});

/** The 202 of a submission. */
export const accepted = (id: string, count: number): Answer => ({
  status: 202,
  body: { batch_id: id, received_count: count },
});

/** A terminal status record. */
export const record = (id: string, upserted: number, failed: number): Answer => ({
  status: 200,
  body: { batch_id: id, status: failed ? 'completed_with_errors' : 'completed', upserted, failed },
});

/** An errors page holding nothing. */
export const noErrors: Answer = { status: 200, body: { data: [], next_cursor: null } };
