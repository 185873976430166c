import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { startBalancer, type Balancer } from '../../reliability/balancer.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { freePort, stopProcess, type ServiceProcess } from '../helpers/process-service.ts';
import { serviceProcessesForFile } from '../helpers/file-fixture.ts';
import { TERMINAL } from '../helpers/assertions.ts';

/**
 * A rolling restart (README "Scaling out"): two API processes behind a loopback TCP
 * balancer are drained (SIGTERM) and started again one after the other, while clients submit and
 * poll over keep-alive connections. No request may fail (a reset on a reused idle connection
 * included) and no accepted batch may be lost.
 */

const processes = serviceProcessesForFile('rolling');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let balancer: Balancer | undefined;

after(async () => {
  await balancer?.close();
});

async function start(role: 'api' | 'worker', port: number): Promise<ServiceProcess> {
  const proc = await processes.start({
    ROLE: role,
    PORT: String(port),
    ANALYSIS_ENABLED: 'false',
    WORKER_POLL_MS: '500',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  for (;;) {
    const res = await fetch(`${proc.baseUrl}/readyz`);
    await res.arrayBuffer();
    if (res.status === 200) return proc;
    await sleep(100);
  }
}

void test(
  'a rolling restart of two API processes behind a balancer fails no request and loses no batch',
  {
    skip: processes.serverUrl
      ? false
      : 'needs TEST_DATABASE_URL: several processes share one PostgreSQL server',
    timeout: 240_000,
  },
  async () => {
    const ports = [await freePort(), await freePort()];
    const apis = [await start('api', ports[0]!)];
    apis.push(await start('api', ports[1]!));
    await start('worker', await freePort());
    balancer = await startBalancer(ports);
    const base = `http://127.0.0.1:${balancer.port}`;
    const token = await processes.token(`rolling-${randomBytes(4).toString('hex')}`);
    const headers = { authorization: `Bearer ${token}` };

    const failures: string[] = [];
    const accepted: string[] = [];
    let answered = 0;
    let running = true;
    // Submissions over undici's keep-alive pool; polls over Node's http.Agent, which hands its
    // sockets out in turn (fifo), so each of them sits idle between uses.
    const undiciAgent = new Agent({ connections: 4 });
    const httpAgent = new http.Agent({ keepAlive: true, scheduling: 'fifo', maxSockets: 6 });
    const submitter = async () => {
      while (running) {
        try {
          const res = await request(`${base}/products/ingestions`, {
            method: 'POST',
            dispatcher: undiciAgent,
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ items: [product(), product()] }),
          });
          const body = (await res.body.json()) as { batch_id?: string };
          answered++;
          if (res.statusCode === 202) accepted.push(body.batch_id!);
          else failures.push(`POST answered ${res.statusCode}`);
        } catch (error) {
          failures.push(`POST: ${(error as Error).message}`);
        }
        await sleep(Math.random() * 200);
      }
    };
    const poll = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.get(`${base}${path}`, { agent: httpAgent, headers }, (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode!));
        });
        req.once('error', reject);
      });
    const poller = async () => {
      while (running) {
        const id = accepted.at(-1 - Math.floor(Math.random() * Math.min(accepted.length, 5)));
        const path = id ? `/products/ingestions/${id}` : '/products/ingestions?limit=5';
        try {
          const status = await poll(path);
          answered++;
          if (status !== 200) failures.push(`GET ${path} answered ${status}`);
        } catch (error) {
          failures.push(`GET ${path}: ${(error as Error).message}`);
        }
        await sleep(Math.random() * 30);
      }
    };
    const clients = [submitter(), submitter(), ...Array.from({ length: 8 }, () => poller())];

    await sleep(1_500);
    for (const [i, port] of ports.entries()) {
      assert.deepEqual(await stopProcess(apis[i]!, 'SIGTERM', 20_000), { code: 0, signal: null });
      apis[i] = await start('api', port);
      await sleep(1_500);
    }
    running = false;
    await Promise.all(clients);

    assert.deepEqual(failures, []);
    assert.equal(balancer.refused(), 0);
    assert.ok(accepted.length > 10 && answered > 50, `${accepted.length} batches, ${answered} answers`);
    // Zero lost batches: each accepted one is listed and ends completed.
    for (const id of accepted) {
      for (;;) {
        const res = await fetch(`${base}/products/ingestions/${id}`, { headers });
        const record = (await res.json()) as { status: string; upserted: number };
        if (TERMINAL.has(record.status)) {
          assert.deepEqual(
            { status: record.status, upserted: record.upserted },
            { status: 'completed', upserted: 2 },
          );
          break;
        }
        await sleep(200);
      }
    }
    const listed: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await fetch(`${base}/products/ingestions?limit=100${query}`, { headers });
      const body = (await page.json()) as { data: Array<{ batch_id: string }>; next_cursor: string | null };
      listed.push(...body.data.map((b) => b.batch_id));
      cursor = body.next_cursor;
    } while (cursor);
    assert.deepEqual(listed.sort(), [...accepted].sort());
    await undiciAgent.close();
    httpAgent.destroy();
  },
);
