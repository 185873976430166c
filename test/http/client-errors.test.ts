/** Requests Node's HTTP parser rejects still answer problem+json with an X-Request-Id (docs/reference.md §2). */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';

import { startTestService, type TestService } from '../helpers/test-service.ts';

let svc: TestService;
let port: number;

before(async () => {
  // A short REQUEST_TIMEOUT_MS, so a request that never completes is cut within the test.
  svc = await startTestService({ REQUEST_TIMEOUT_MS: '1000' });
  // `inject` bypasses Node's parser, so these tests need a real listening socket.
  await svc.service.app!.listen({ port: 0, host: '127.0.0.1' });
  port = (svc.service.app!.server.address() as AddressInfo).port;
});
after(() => svc.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface RawAnswer {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
}

/** Splits one HTTP/1.1 answer; `rest` is what follows its body (by Content-Length), if complete. */
function parseAnswer(bytes: Buffer): { answer: RawAnswer; rest: Buffer } | null {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  const bodyEnd = end + 4 + Number(headers['content-length']);
  if (bytes.length < bodyEnd) return null;
  const body = bytes.subarray(end + 4, bodyEnd).toString('utf8');
  return { answer: { statusLine: statusLine!, headers, body }, rest: bytes.subarray(bodyEnd) };
}

/**
 * Writes each of `requests` on one connection, the next only once the previous is answered, and
 * returns the answers; the connection must then be closed by the server with nothing left over.
 */
function exchange(...requests: string[]): Promise<RawAnswer[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const answers: RawAnswer[] = [];
    let pending: Buffer = Buffer.alloc(0);
    const sendNext = () => socket.write(requests[answers.length]!);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const parsed = parseAnswer(pending);
      if (!parsed) return;
      answers.push(parsed.answer);
      pending = parsed.rest;
      if (answers.length < requests.length) sendNext();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      if (answers.length !== requests.length || pending.length > 0) {
        reject(new Error(`${answers.length} answers, then ${JSON.stringify(pending.toString())}`));
      } else resolve(answers);
    });
    sendNext();
  });
}

/** The exact problem answer of a parser error, whose request id is new and random. */
function assertProblem(
  answer: RawAnswer | undefined,
  statusLine: string,
  problem: Record<string, unknown>,
): asserts answer is RawAnswer {
  assert.ok(answer);
  assert.equal(answer.statusLine, statusLine);
  assert.match(answer.headers['x-request-id'] ?? '', UUID);
  assert.deepEqual(answer.headers, {
    'content-type': 'application/problem+json; charset=utf-8',
    'content-length': String(Buffer.byteLength(answer.body)),
    'x-request-id': answer.headers['x-request-id'],
    connection: 'close',
  });
  assert.equal(answer.body, JSON.stringify(problem));
}

void test('a header block over Node’s 16 KiB limit answers 431 payload-too-large as problem+json', async () => {
  const filler = 'a'.repeat(17 * 1024);
  const [answer] = await exchange(
    `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: mine\r\nX-Filler: ${filler}\r\n\r\n`,
  );
  assertProblem(answer, 'HTTP/1.1 431 Request Header Fields Too Large', {
    type: 'http://service.test/problems/payload-too-large',
    title: 'Payload too large',
    status: 431,
    detail: 'The request header fields are larger than this server accepts: at most 16384 bytes in all.',
    instance: '/',
  });
  assert.notEqual(answer.headers['x-request-id'], 'mine');
});

/** The answer to any request Node's parser cannot read (400). */
const NOT_HTTP = {
  type: 'http://service.test/problems/validation-error',
  title: 'Validation failed',
  status: 400,
  detail: 'The request is not well-formed HTTP.',
  instance: '/',
};

void test('a request line that is not HTTP answers 400 validation-error as problem+json', async () => {
  const [answer] = await exchange('\x01\x02 nonsense <script>\r\n\r\n');
  assertProblem(answer, 'HTTP/1.1 400 Bad Request', NOT_HTTP);
});

void test('a header with a byte HTTP forbids answers 400 without echoing the bytes', async () => {
  const [answer] = await exchange('GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Bad: a\x00b\r\n\r\n');
  assertProblem(answer, 'HTTP/1.1 400 Bad Request', NOT_HTTP);
});

void test('a well-formed request is answered normally, and a malformed one after it on the same connection gets a problem', async () => {
  const [ok, bad] = await exchange(
    'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: abc-123\r\n\r\n',
    'GET /healthz HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n',
  );
  assert.ok(ok);
  assert.equal(ok.statusLine, 'HTTP/1.1 200 OK');
  assert.equal(ok.headers['x-request-id'], 'abc-123');
  assert.equal(ok.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(ok.headers.connection, 'keep-alive');
  assert.equal(ok.body, '{"status":"ok"}');
  assertProblem(bad, 'HTTP/1.1 400 Bad Request', NOT_HTTP);
  assert.notEqual(bad.headers['x-request-id'], 'abc-123');
});

void test('chunk extensions over Node’s 16 KiB limit answer 413 payload-too-large, naming the path already read', async () => {
  const extension = 'x'.repeat(20 * 1024);
  const [answer] = await exchange(
    'POST /products/ingestions?via=raw HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
      `Transfer-Encoding: chunked\r\n\r\n2;${extension}\r\n{}\r\n0\r\n\r\n`,
  );
  assertProblem(answer, 'HTTP/1.1 413 Payload Too Large', {
    type: 'http://service.test/problems/payload-too-large',
    title: 'Payload too large',
    status: 413,
    detail:
      'The chunk extensions of the request body are larger than this server accepts: at most 16384 bytes in all.',
    instance: '/products/ingestions',
  });
});

void test('a body not received whole within REQUEST_TIMEOUT_MS answers 408, and nothing is stored', async () => {
  const tenant = svc.tenant();
  const token = await svc.token(tenant);
  const started = Date.now();
  // A valid submission's headers, then 10 of the 100 bytes promised, then nothing.
  const [answer] = await exchange(
    'POST /products/ingestions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${token}\r\nContent-Length: 100\r\n\r\n{"items":[`,
  );
  const waited = Date.now() - started;
  assertProblem(answer, 'HTTP/1.1 408 Request Timeout', {
    type: 'http://service.test/problems/validation-error',
    title: 'Validation failed',
    status: 408,
    detail: 'The request was not received completely in time.',
    instance: '/products/ingestions',
  });
  // Node looks at open requests every quarter of the timeout (src/app/build-app.ts).
  assert.ok(waited >= 1000 && waited < 5000, `answered after ${waited} ms`);
  const listed = await svc.request({ method: 'GET', url: '/products/ingestions', token });
  assert.equal(listed.statusCode, 200);
  assert.deepEqual(listed.json(), { data: [], next_cursor: null });
});

void test('a request target in absolute form is routed by its path, and no answer echoes its host', async () => {
  const token = await svc.token(svc.tenant());
  const request = (target: string) =>
    `GET ${target} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`;
  const [health] = await exchange(request('http://evil.example/healthz'));
  assert.equal(health?.statusLine, 'HTTP/1.1 200 OK');
  const [unknownBatch] = await exchange(request('http://evil.example/products/ingestions/nope?x=1'));
  assert.equal(unknownBatch?.statusLine, 'HTTP/1.1 404 Not Found');
  assert.equal(JSON.parse(unknownBatch.body).instance, '/products/ingestions/nope');
  const [noRoute] = await exchange(request('HTTP://evil.example:8080/nope?q=1'));
  assert.equal(noRoute?.statusLine, 'HTTP/1.1 404 Not Found');
  assert.deepEqual(JSON.parse(noRoute.body), {
    type: 'http://service.test/problems/not-found',
    title: 'Not found',
    status: 404,
    detail: 'No route for GET /nope.',
    instance: '/nope',
  });
  // A fragment is not HTTP; the router refuses the target, and the answer still names only the path.
  const [fragment] = await exchange(request('http://evil.example/nope#frag'));
  assert.equal(fragment?.statusLine, 'HTTP/1.1 404 Not Found');
  assert.equal(JSON.parse(fragment.body).instance, '/nope');
  for (const answer of [health, unknownBatch, noRoute, fragment]) assert.doesNotMatch(answer.body, /evil/);
});
