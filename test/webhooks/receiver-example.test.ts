import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { product } from '../helpers/catalog-fixtures.ts';
import { freePort } from '../helpers/process-service.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/** docs/webhooks.md: its receiver example, run as it is, verifies a real delivery and refuses a forgery. */

const EXAMPLE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../docs/examples/webhook-receiver.mjs',
);

let svc: TestService;
let child: ChildProcess | undefined;

before(async () => {
  svc = await startTestService({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' });
});
after(async () => {
  child?.kill();
  await svc.stop();
});

test('the documented receiver verifies a delivery with node:crypto and prints its event', async () => {
  const token = await svc.token(svc.tenant());
  // The endpoint is registered first: the receiver needs its secret. Its URL names the port the
  // receiver is then told to listen on.
  const port = await freePort();
  const created = await svc.request({
    method: 'POST',
    url: '/webhook-endpoints',
    token,
    json: { url: `http://127.0.0.1:${port}/` },
  });
  assert.equal(created.statusCode, 201, created.body);
  const { secret } = created.json<{ secret: string }>();

  child = spawn(process.execPath, [EXAMPLE], {
    env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: secret, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const errors = createInterface({ input: child.stderr! })[Symbol.asyncIterator]();
  assert.equal((await errors.next()).value, `listening on ${port}`);

  // A forgery: right shape, wrong key.
  const forged = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: {
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
    },
    body: '{}',
  });
  assert.equal(forged.status, 400);

  const batchId = await svc.submit(token, [product()]);
  await svc.waitForTerminal(token, batchId);
  const line = await Promise.race([
    lines.next(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no event printed')), 20_000)),
  ]);
  const event = JSON.parse(String(line.value)) as Record<string, unknown>;
  assert.deepEqual(
    { ...event, id: typeof event.id },
    {
      id: 'string',
      type: 'batch.completed',
      batch_id: batchId,
      status: 'completed',
    },
  );
});
