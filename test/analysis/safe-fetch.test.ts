import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { blockedCategory } from '../../src/net/address-policy.ts';
import { looksLikeImage } from '../../src/analysis/image-quality.ts';
import { FetchFailure } from '../../src/analysis/fetch-failure.ts';
import { createSafeFetch, type FetchImage } from '../../src/analysis/safe-fetch.ts';
import { redirect, roomPhoto, serve, startServer } from './analysis-helpers.ts';

let server: Awaited<ReturnType<typeof startServer>>;
let photo: Buffer;
let hangs = 0;

before(async () => {
  photo = await roomPhoto(640, 480);
  server = await startServer({
    '/photo.jpg': serve(photo),
    '/octet.jpg': serve(photo, 'application/octet-stream'),
    '/untyped.jpg': (_request, response) => response.writeHead(200).end(photo),
    '/page.html': serve('<html>hi</html>', 'text/html; charset=utf-8'),
    '/octet.txt': serve('just text', 'application/octet-stream'),
    '/drawing.svg': serve('<svg xmlns="http://www.w3.org/2000/svg"/>', 'image/svg+xml'),
    '/declared-big.jpg': (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(26 * 1024 * 1024) });
      response.end();
    },
    '/streamed-big.jpg': (_request, response) => {
      // Chunked, no Content-Length: only counting while streaming can stop it.
      response.writeHead(200, { 'content-type': 'image/jpeg' });
      const chunk = Buffer.alloc(1024 * 1024, 0xab);
      let sent = 0;
      const push = () => {
        while (sent < 30 && response.write(chunk)) sent += 1;
        if (sent >= 30) response.end();
        else response.once('drain', push);
      };
      push();
    },
    '/hang.jpg': () => {
      hangs += 1;
    },
    '/slow-body.jpg': (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/jpeg' });
      response.write(photo.subarray(0, 100));
    },
    '/gone.jpg': (_request, response) => response.writeHead(410).end(),
    '/error.jpg': (_request, response) => response.writeHead(500).end('boom'),
    '/r1': redirect('/r2'),
    '/r2': redirect('/r3', 301),
    '/r3': redirect('/photo.jpg', 307),
    '/r0': redirect('/r1', 308),
    '/no-location': (_request, response) => response.writeHead(302).end(),
    '/to-metadata': redirect('http://169.254.169.254/latest/meta-data/'),
    '/to-unspecified': redirect('http://0.1.2.3/photo.jpg'),
    '/to-private': redirect('http://10.0.0.1/photo.jpg'),
    '/to-ftp': redirect('ftp://127.0.0.1/photo.jpg'),
  });
});

after(() => server.close());

const loopbackFetch = createSafeFetch({ allowPrivateHosts: true });
const publicOnlyFetch = createSafeFetch({ allowPrivateHosts: false });

async function failure(fetchImage: FetchImage, url: string): Promise<FetchFailure> {
  try {
    await fetchImage(url);
  } catch (error) {
    assert.ok(error instanceof FetchFailure, `expected a FetchFailure, got ${String(error)}`);
    return error;
  }
  assert.fail(`fetching ${url} should have failed`);
}

void test('fetches an image and says where it ended up', async () => {
  const fetched = await loopbackFetch(server.url('/photo.jpg'));
  assert.deepEqual(fetched.body, photo);
  assert.equal(fetched.contentType, 'image/jpeg');
  assert.equal(fetched.finalUrl, server.url('/photo.jpg'));
});

void test('accepts octet-stream or untyped bodies only when the bytes are an image', async () => {
  assert.deepEqual((await loopbackFetch(server.url('/octet.jpg'))).body, photo);
  assert.deepEqual((await loopbackFetch(server.url('/untyped.jpg'))).body, photo);
  const text = await failure(loopbackFetch, server.url('/octet.txt'));
  assert.equal(text.kind, 'not-an-image');
  assert.equal(text.message, 'Not an image: the server sent application/octet-stream');
});

void test('refuses pages and SVG drawings as not images', async () => {
  const page = await failure(loopbackFetch, server.url('/page.html'));
  assert.equal(page.kind, 'not-an-image');
  assert.equal(page.message, 'Not an image: the server sent text/html');
  assert.equal(
    (await failure(loopbackFetch, server.url('/drawing.svg'))).message,
    'Not an image: the server sent image/svg+xml',
  );
});

void test('reports HTTP error statuses', async () => {
  assert.equal(
    (await failure(loopbackFetch, server.url('/missing.jpg'))).message,
    'The image server answered HTTP 404',
  );
  assert.equal(
    (await failure(loopbackFetch, server.url('/gone.jpg'))).message,
    'The image server answered HTTP 410',
  );
  assert.equal((await failure(loopbackFetch, server.url('/error.jpg'))).kind, 'http-status');
});

void test('caps the size by Content-Length up front and while streaming (25 MiB)', async () => {
  const declared = await failure(loopbackFetch, server.url('/declared-big.jpg'));
  assert.equal(declared.kind, 'too-large');
  assert.equal(declared.message, 'Image too large: 26 MiB (limit 25 MiB)');
  const streamed = await failure(loopbackFetch, server.url('/streamed-big.jpg'));
  assert.equal(streamed.kind, 'too-large');
  assert.equal(streamed.message, 'Image too large: more than 25 MiB');
});

void test('times out a server that never answers, and one that stalls mid-body', async () => {
  const quick = createSafeFetch({ allowPrivateHosts: true, timeoutMs: 300 });
  const started = performance.now();
  const silent = await failure(quick, server.url('/hang.jpg'));
  assert.equal(silent.kind, 'timeout');
  assert.equal(silent.message, 'Timed out after 0.3 s fetching the image');
  // A timeout that did not work would wait for ever: the bound only has to outlast a stalled machine.
  assert.ok(performance.now() - started < 10_000);
  assert.equal(hangs, 1);
  assert.equal((await failure(quick, server.url('/slow-body.jpg'))).kind, 'timeout');
});

void test('follows up to 3 redirects and refuses a 4th', async () => {
  const followed = await loopbackFetch(server.url('/r1'));
  assert.equal(followed.finalUrl, server.url('/photo.jpg'));
  const tooMany = await failure(loopbackFetch, server.url('/r0'));
  assert.equal(tooMany.kind, 'too-many-redirects');
  assert.equal(tooMany.message, 'Too many redirects (more than 3)');
  assert.equal(
    (await failure(loopbackFetch, server.url('/no-location'))).message,
    'HTTP 302 redirect without a Location header',
  );
});

void test('checks every redirect hop again', async () => {
  const metadata = await failure(loopbackFetch, server.url('/to-metadata'));
  assert.equal(metadata.kind, 'blocked-address');
  assert.equal(metadata.message, 'Blocked address: 169.254.169.254 is a cloud metadata address');
  assert.equal(
    (await failure(loopbackFetch, server.url('/to-unspecified'))).message,
    'Blocked address: 0.1.2.3 is an unspecified address',
  );
  assert.equal((await failure(loopbackFetch, server.url('/to-ftp'))).kind, 'unsupported-scheme');
  // The public-only policy, with the test server's own address let through, so the second hop is
  // the one the real policy judges.
  const policy = (address: string) => (address === '127.0.0.1' ? undefined : blockedCategory(address, false));
  const strict = createSafeFetch({ allowPrivateHosts: false, addressPolicy: policy });
  const privateHop = await failure(strict, server.url('/to-private'));
  assert.equal(privateHop.kind, 'blocked-address');
  assert.equal(privateHop.message, 'Blocked address: 10.0.0.1 is a private address');
});

void test('with private hosts allowed, a server named by 0.0.0.0 is reached as on loopback', async () => {
  const url = server.url('/photo.jpg').replace('127.0.0.1', '0.0.0.0');
  assert.ok(url.startsWith('http://0.0.0.0:'), url);
  assert.deepEqual((await loopbackFetch(url)).body, photo);
  assert.equal(
    (await failure(publicOnlyFetch, url)).message,
    'Blocked address: 0.0.0.0 is an unspecified address',
  );
});

void test('refuses loopback and private addresses before connecting when they are not allowed', async () => {
  const loopback = await failure(publicOnlyFetch, server.url('/photo.jpg'));
  assert.equal(loopback.message, 'Blocked address: 127.0.0.1 is a loopback address');
  assert.equal(
    (await failure(publicOnlyFetch, 'http://10.0.0.1/photo.jpg')).message,
    'Blocked address: 10.0.0.1 is a private address',
  );
  assert.equal(
    (await failure(publicOnlyFetch, 'http://[::ffff:192.168.1.1]/x.jpg')).message,
    'Blocked address: ::ffff:c0a8:101 is a private address',
  );
  assert.equal(
    (await failure(publicOnlyFetch, 'http://localhost/x.jpg')).message,
    'Blocked address: localhost resolves to a loopback address',
  );
});

void test('a localhost URL reaches a server bound to ::1 alone as well as one bound to 127.0.0.1', async (t) => {
  const v6 = await startServer({ '/photo.jpg': serve(photo) }, '::1').catch(() => null);
  if (!v6) {
    t.skip('this machine has no IPv6 loopback (::1) to listen on');
    return;
  }
  try {
    assert.deepEqual((await loopbackFetch(`http://localhost:${v6.port}/photo.jpg`)).body, photo);
  } finally {
    await v6.close();
  }
  assert.deepEqual((await loopbackFetch(`http://localhost:${server.port}/photo.jpg`)).body, photo);
});

void test('tries every checked address in turn: one refusing connections is not the end', async () => {
  // Nothing listens on ::1 at the test server's port: the first answer refuses, the second serves.
  const resolveHost = async () => [
    { address: '::1', family: 6 },
    { address: '127.0.0.1', family: 4 },
  ];
  const fetchImage = createSafeFetch({ allowPrivateHosts: true, resolveHost });
  assert.deepEqual((await fetchImage(`http://images.test:${server.port}/photo.jpg`)).body, photo);
});

void test('connects to the address it checked, never asking DNS again', async () => {
  const asked: string[] = [];
  const resolveHost = async (hostname: string) => {
    asked.push(hostname);
    return [{ address: '127.0.0.1', family: 4 }];
  };
  const fetchImage = createSafeFetch({ allowPrivateHosts: true, resolveHost });
  const fetched = await fetchImage(`http://images.test:${server.port}/r3`);
  assert.deepEqual(fetched.body, photo);
  assert.equal(fetched.finalUrl, `http://images.test:${server.port}/photo.jpg`);
  assert.deepEqual(asked, ['images.test', 'images.test']);
});

void test('refuses a name whose DNS answer is private, even when another answer is public', async () => {
  const resolveHost = async () => [
    { address: '93.184.215.14', family: 4 },
    { address: '10.1.2.3', family: 4 },
  ];
  const fetchImage = createSafeFetch({ allowPrivateHosts: false, resolveHost });
  const refused = await failure(fetchImage, 'https://photos.example.com/a.jpg');
  assert.equal(refused.message, 'Blocked address: photos.example.com resolves to a private address');
});

void test('reports hosts that do not resolve, without asking a DNS server for .invalid', async () => {
  const missing = await failure(publicOnlyFetch, 'https://no-such-host.invalid/photo.jpg');
  assert.equal(missing.kind, 'host-not-found');
  assert.equal(missing.message, 'Host not found: no-such-host.invalid');
  const failingResolver = createSafeFetch({
    allowPrivateHosts: false,
    resolveHost: async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    },
  });
  assert.equal(
    (await failure(failingResolver, 'https://gone.example/a.jpg')).message,
    'Host not found: gone.example',
  );
});

void test('says in plain words why a connection failed, never naming the address it reached', async () => {
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  // Answers every connection with bytes that are not HTTP, or hangs up at once.
  const raw = net.createServer((socket) => {
    socket.once('data', (bytes) => {
      if (bytes.toString('latin1').startsWith('GET /hang-up')) socket.destroy();
      else socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n');
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  const rawPort = (raw.address() as AddressInfo).port;
  try {
    const cases: Array<[string, string]> = [
      [`http://127.0.0.1:${closedPort}/photo.jpg`, 'the image server refused the connection'],
      [
        `http://127.0.0.1:${rawPort}/hang-up.jpg`,
        'the image server closed the connection before the image was sent',
      ],
      [`http://127.0.0.1:${rawPort}/photo.jpg`, 'the image server did not answer in valid HTTP'],
    ];
    for (const [url, reason] of cases) {
      const failed = await failure(loopbackFetch, url);
      assert.deepEqual(
        [failed.kind, failed.message],
        ['network', `Could not download the image: ${reason}`],
        url,
      );
    }
    // https to a server that speaks plain HTTP: the handshake fails; OpenSSL's code says how.
    const tls = await failure(loopbackFetch, server.url('/photo.jpg').replace('http:', 'https:'));
    assert.equal(tls.kind, 'network');
    assert.match(
      tls.message,
      /^Could not download the image: its secure \(TLS\) connection failed \([A-Z_]+\)$/,
    );
    assert.doesNotMatch(tls.message, /127\.0\.0\.1/);
  } finally {
    await new Promise((resolve) => raw.close(resolve));
  }
});

void test('fetches http and https only, and only well-formed URLs', async () => {
  const cases: Array<[string, string]> = [
    ['ftp://127.0.0.1/photo.jpg', 'Only http and https URLs can be fetched, not ftp:'],
    ['file:///etc/passwd', 'Only http and https URLs can be fetched, not file:'],
    ['data:image/png;base64,iVBORw0KGgo=', 'Only http and https URLs can be fetched, not data:'],
    ['javascript:alert(1)', 'Only http and https URLs can be fetched, not javascript:'],
    ['not a url', 'Not a valid URL'],
    ['', 'Not a valid URL'],
    ['http://user:pass@127.0.0.1/photo.jpg', 'URLs with credentials (user:password@) are not fetched'],
  ];
  for (const [url, message] of cases) assert.equal((await failure(loopbackFetch, url)).message, message, url);
});

void test('recognises image formats by their first bytes', () => {
  assert.equal(looksLikeImage(photo), true);
  assert.equal(looksLikeImage(Buffer.from('\x89PNG\r\n\x1a\n0000', 'latin1')), true);
  assert.equal(looksLikeImage(Buffer.from('RIFF0000WEBPVP8 ', 'latin1')), true);
  assert.equal(looksLikeImage(Buffer.from('<html>', 'latin1')), false);
  assert.equal(looksLikeImage(Buffer.alloc(0)), false);
});
