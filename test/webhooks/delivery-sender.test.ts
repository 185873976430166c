import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createWebhookSender } from '../../src/webhooks/delivery-sender.ts';

/**
 * docs/reference.md §10.1, one attempt against a real loopback server: no redirects followed, at most 64 KiB
 * of an answer read, a time limit, and the analyzer's address policy (src/net) with its reasons.
 */

let server: http.Server;
let base: string;
const hits: string[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    req.resume();
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/target' }).end();
    } else if (req.url === '/endless') {
      // An answer that never ends: only its first 64 KiB may be read.
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    } else if (req.url === '/slow') {
      // Never answers.
    } else {
      res.writeHead(204).end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const message = (url: string) => ({ url, headers: { 'webhook-id': 'x' }, body: '{}' });
const open = createWebhookSender({ allowPrivateHosts: true, userAgent: 'test', timeoutMs: 2000 });

describe('one webhook attempt', () => {
  test('a 2xx is the answer', async () => {
    assert.deepEqual(await open(message(`${base}/ok`)), { statusCode: 204 });
  });

  test('the connection goes to the checked address (pinned), not to a second DNS answer', async () => {
    hits.length = 0;
    const port = (server.address() as AddressInfo).port;
    let lookups = 0;
    const pinned = createWebhookSender({
      allowPrivateHosts: true,
      userAgent: 'test',
      resolveHost: async () => {
        lookups++;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    // No DNS server knows this name: only the checked answer can have been used to connect.
    assert.deepEqual(await pinned(message(`http://hooks.catalog-test.example:${port}/ok`)), {
      statusCode: 204,
    });
    assert.equal(lookups, 1);
    assert.deepEqual(hits, ['/ok']);
  });

  test('a redirect is an answer, not followed', async () => {
    hits.length = 0;
    assert.deepEqual(await open(message(`${base}/redirect`)), { statusCode: 302 });
    assert.deepEqual(hits, ['/redirect']);
  });

  test('an endless answer: the status counts, and reading stops after 64 KiB', async () => {
    const started = Date.now();
    assert.deepEqual(await open(message(`${base}/endless`)), { statusCode: 200 });
    // An unbounded read would never end: the bound only has to outlast a stalled machine.
    assert.ok(Date.now() - started < 10_000, 'the body was not read to its end');
  });

  test('no answer within the time limit is a failure saying so', async () => {
    const quick = createWebhookSender({ allowPrivateHosts: true, userAgent: 'test', timeoutMs: 300 });
    assert.deepEqual(await quick(message(`${base}/slow`)), {
      statusCode: null,
      error: 'No answer within 0.3 s',
    });
  });

  test('a refused connection is a failure saying so', async () => {
    const port = (server.address() as AddressInfo).port;
    const closed = http.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const free = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    assert.notEqual(free, port);
    assert.deepEqual(await open(message(`http://127.0.0.1:${free}/`)), {
      statusCode: null,
      error: 'The endpoint refused the connection',
    });
  });

  test('the address policy: loopback refused without the flag, metadata refused always', async () => {
    const strict = createWebhookSender({ allowPrivateHosts: false, userAgent: 'test', timeoutMs: 2000 });
    hits.length = 0;
    assert.deepEqual(await strict(message(`${base}/ok`)), {
      statusCode: null,
      error: 'Blocked address: 127.0.0.1 is a loopback address',
    });
    assert.deepEqual(await strict(message('https://10.1.2.3/hook')), {
      statusCode: null,
      error: 'Blocked address: 10.1.2.3 is a private address',
    });
    assert.deepEqual(await open(message('http://169.254.169.254/latest/meta-data')), {
      statusCode: null,
      error: 'Blocked address: 169.254.169.254 is a cloud metadata address',
    });
    const resolving = createWebhookSender({
      allowPrivateHosts: false,
      userAgent: 'test',
      resolveHost: async () => [{ address: '192.168.1.10', family: 4 }],
    });
    assert.deepEqual(await resolving(message('https://hooks.example.com/in')), {
      statusCode: null,
      error: 'Blocked address: hooks.example.com resolves to a private address',
    });
    assert.deepEqual(hits, []);
  });
});
