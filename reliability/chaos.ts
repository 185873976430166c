/**
 * `npm run chaos [-- --seed N] [-- --short] [-- --failover [--async]]`: several API and worker
 * processes on a private PostgreSQL, tenants submitting and reading while processes are SIGKILLed,
 * backends terminated and PostgreSQL restarted at seeded moments; then every batch, error page and
 * product is compared with the model of the processing rules. `--failover` runs on a primary and a
 * streaming standby behind PgBouncer instead and promotes the standby mid-load (synchronous
 * replication; `--async` measures what asynchronous replication loses). Prints the seed and
 * `N passed, M failed`; exits 1 on any failure. docs/reliability-tools.md describes what it checks.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { signToken } from '../test/helpers/process-service.ts';
import {
  assertProgression,
  assertRecordInvariants,
  TERMINAL,
  type StatusRecord,
} from '../test/helpers/assertions.ts';
import { createChaosClient, type ChaosClient, type RequestLog } from './chaos-client.ts';
import { checkTenant, createVerdicts, type ChaosTenant, type Verdicts } from './chaos-checks.ts';
import {
  FAULT_GRACE_MS,
  insideFault,
  planFaults,
  runFaults,
  type FaultKind,
  type FaultWindow,
} from './chaos-faults.ts';
import { externalIdOf, makeBatch, seededRandom, type Random } from './chaos-workload.ts';
import { startCluster, type Cluster } from './cluster.ts';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres.ts';
import { startStandbyPair, type FailoverTimes, type StandbyPair } from './standby-pair.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => console.log(line);

const { values: args } = parseArgs({
  options: {
    seed: { type: 'string' },
    short: { type: 'boolean', default: false },
    failover: { type: 'boolean', default: false },
    async: { type: 'boolean', default: false },
    'standby-stall-ms': { type: 'string', default: '0' },
  },
});
if (args.async && !args.failover) throw new Error('--async goes with --failover');
const standbyStallMs = Number(args['standby-stall-ms']);
if (!Number.isSafeInteger(standbyStallMs) || standbyStallMs < 0) {
  throw new Error('--standby-stall-ms must be a non-negative integer');
}
if (standbyStallMs > 0 && !args.failover) throw new Error('--standby-stall-ms goes with --failover');
const seed = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(args.seed);
if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer`);

/** The run's size: `--short` is one fault of each kind in well under 3 minutes, for CI. */
const SHAPE = args.short
  ? { apis: 2, workers: 2, tenants: 3, workloadMs: 35_000, maxItems: 30 }
  : { apis: 2, workers: 2, tenants: 4, workloadMs: 90_000, maxItems: 40 };
/**
 * `--failover` is a run of its own with one fault, the standby's promotion, so that every 5xx and
 * every lost batch is the failover's.
 */
const FAULTS: Record<FaultKind, number> = args.failover
  ? { 'kill-worker': 0, 'kill-api': 0, 'terminate-backends': 0, 'restart-postgres': 0, failover: 1 }
  : args.short
    ? { 'kill-worker': 1, 'kill-api': 1, 'terminate-backends': 1, 'restart-postgres': 1, failover: 0 }
    : { 'kill-worker': 3, 'kill-api': 2, 'terminate-backends': 2, 'restart-postgres': 1, failover: 0 };
/** Asynchronous replication may lose accepted batches: measured and printed, not failed. */
const MEASURE_ONLY = args.failover && args.async;
/** A worker killed mid-batch hands it on within 90 s (README "Scaling out"). */
const SETTLE_MS = 150_000;

/** One tenant's submissions, one batch at a time, until `until`. */
async function submitLoop(client: ChaosClient, tenant: ChaosTenant, random: Random, until: number) {
  while (Date.now() < until) {
    const items = makeBatch(random, tenant.name, SHAPE.maxItems);
    const { batchId, lost, replayed } = await client.submit(tenant.token, items);
    tenant.submissions.push({ items, batchId, lost, keyed: true, replayed });
    await sleep(random.int(0, 1000));
  }
}

/**
 * Reads statuses of the tenant's batches while they run, checking each record's invariants and its
 * progression from the last one seen, and walks error pages of random sizes (every index once).
 */
async function pollLoop(
  client: ChaosClient,
  tenant: ChaosTenant,
  random: Random,
  until: () => boolean,
  verdicts: Verdicts,
  lostBatches: ReadonlySet<string>,
) {
  const seen = new Map<string, StatusRecord>();
  const problems: string[] = [];
  while (!until()) {
    await sleep(random.int(50, 300));
    if (tenant.submissions.length === 0) continue;
    const { batchId, items } = random.pick(tenant.submissions);
    try {
      const answer = await client.get(tenant.token, `/products/ingestions/${batchId}`);
      assert.equal(answer.status, 200);
      const record = answer.json as StatusRecord;
      assertRecordInvariants(record, items.length);
      const before = seen.get(batchId);
      if (before) assertProgression(before, record);
      seen.set(batchId, record);
      if (TERMINAL.has(record.status) || random.chance(0.3)) {
        const indices: number[] = [];
        let cursor: string | null = null;
        const limit = random.int(1, 7);
        do {
          const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
          const page = await client.get(
            tenant.token,
            `/products/ingestions/${batchId}/errors?limit=${limit}${query}`,
          );
          assert.equal(page.status, 200);
          const body = page.json as { data: Array<{ index: number }>; next_cursor: string | null };
          indices.push(...body.data.map((r) => r.index));
          cursor = body.next_cursor;
        } while (cursor && !until());
        assert.deepEqual(
          indices,
          [...new Set(indices)].sort((a, b) => a - b),
          'errors pages repeat or go back',
        );
      }
    } catch (error) {
      problems.push(`${batchId}: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  // A batch the failover lost (asynchronous replication) is 404, or goes back, when read again.
  const own = problems.filter((p) => !lostBatches.has(p.split(':')[0]!));
  if (MEASURE_ONLY) {
    say(
      `  ${tenant.name}: live reads that went back after the failover: ${own.length} ${own.slice(0, 3).join('; ')}`,
    );
    return;
  }
  await verdicts.check(
    `${tenant.name}: live status records and error pages consistent (${seen.size} batches)`,
    () => {
      assert.deepEqual(own.slice(0, 3), []);
    },
  );
}

/** Asks for other tenants' batches, error pages and products: each must be 404. */
async function probeLoop(
  client: ChaosClient,
  tenants: ChaosTenant[],
  prober: string,
  random: Random,
  until: () => boolean,
) {
  const leaks: string[] = [];
  let probes = 0;
  while (!until()) {
    await sleep(random.int(100, 400));
    const victim = random.pick(tenants);
    const asker = random.chance(0.5) ? prober : random.pick(tenants.filter((t) => t !== victim)).token;
    const batch = victim.submissions.length ? random.pick(victim.submissions).batchId : null;
    const paths = [`/products/${externalIdOf(random.int(0, 23))}`];
    if (batch) paths.push(`/products/ingestions/${batch}`, `/products/ingestions/${batch}/errors`);
    for (const path of paths) {
      // The prober has no products of its own; another tenant may own the same external id.
      if (asker !== prober && path.startsWith('/products/p-')) continue;
      const answer = await client.get(asker, path).catch(() => null);
      probes++;
      if (answer && answer.status !== 404) leaks.push(`${path} answered ${answer.status}`);
    }
  }
  return { leaks, probes };
}

async function main(): Promise<number> {
  const flags = [
    args.short && '--short',
    args.failover && '--failover',
    args.async && '--async',
    standbyStallMs > 0 && `--standby-stall-ms ${standbyStallMs}`,
  ].filter(Boolean);
  say(`chaos run, seed ${seed}${flags.length ? ` (${flags.join(' ')})` : ''}`);
  const random = seededRandom(seed);
  const verdicts = createVerdicts(say);
  const postgres: PrivatePostgres | StandbyPair = args.failover
    ? await startStandbyPair({ synchronous: !args.async })
    : await startPrivatePostgres();
  let cluster: Cluster | null = null;
  try {
    say(
      args.failover
        ? `private primary and ${args.async ? 'asynchronous' : 'synchronous'} standby behind PgBouncer on port ${postgres.port}`
        : `private PostgreSQL on port ${postgres.port}`,
    );
    cluster = await startCluster({
      databaseUrl: postgres.url,
      apis: SHAPE.apis,
      workers: SHAPE.workers,
      env: {
        WORKER_POLL_MS: '500',
        // Small chunks, so that a kill or a lost connection lands between the chunks of a batch.
        WORKER_CHUNK_SIZE: '4',
        RATE_LIMIT_PER_MINUTE: '100000',
        LOG_LEVEL: 'error',
      },
    });
    say(`${SHAPE.apis} API and ${SHAPE.workers} worker processes ready`);
    const log: RequestLog = { failed: [], answered: 0, accepted: [] };
    const failovers: FailoverTimes[] = [];
    const lostBatches = new Set<string>();
    const client = createChaosClient(cluster.apis, log);
    const tenants: ChaosTenant[] = await Promise.all(
      Array.from({ length: SHAPE.tenants }, async (_, i) => {
        const name = `chaos-${seed}-${i}`;
        return { name, token: await signToken(cluster!.secret, name), submissions: [] };
      }),
    );
    const prober = await signToken(cluster.secret, `chaos-${seed}-prober`);
    const windows: FaultWindow[] = [];
    const startedAt = Date.now();
    let workloadDone = false;
    const faults = runFaults({
      plan: planFaults(random, SHAPE.workloadMs, FAULTS),
      startedAt,
      random,
      cluster,
      postgres,
      windows,
      say,
      failovers,
      standbyStallMs,
    });
    const readers = [
      ...tenants.map((t) =>
        pollLoop(client, t, seededRandom(random.int(0, 2 ** 30)), () => workloadDone, verdicts, lostBatches),
      ),
    ];
    const probe = probeLoop(
      client,
      tenants,
      prober,
      seededRandom(random.int(0, 2 ** 30)),
      () => workloadDone,
    );
    await Promise.all(
      tenants.map((t) =>
        submitLoop(client, t, seededRandom(random.int(0, 2 ** 30)), startedAt + SHAPE.workloadMs),
      ),
    );
    await faults;
    if (args.failover) {
      // Accepted batches the promoted standby does not have: asynchronous replication's loss.
      let accepted = 0;
      for (const tenant of tenants) {
        const kept = [];
        for (const submission of tenant.submissions) {
          const answer = await client.get(tenant.token, `/products/ingestions/${submission.batchId}`);
          accepted++;
          if (answer.status === 404) lostBatches.add(submission.batchId);
          else kept.push(submission);
        }
        // The rest must still be exact: the standby's WAL is a prefix of the primary's.
        if (MEASURE_ONLY) tenant.submissions = kept;
      }
      say(
        `accepted batches lost by the failover: ${lostBatches.size} of ${accepted} ${[...lostBatches].join(' ')}`,
      );
      if (!MEASURE_ONLY) {
        await verdicts.check('no accepted batch lost by the failover', () =>
          assert.equal(lostBatches.size, 0),
        );
      }
    }
    workloadDone = true;
    await Promise.all(readers);
    const { leaks, probes } = await probe;
    say(
      `workload: ${tenants.reduce((n, t) => n + t.submissions.length, 0)} batches accepted in ` +
        `${((Date.now() - startedAt) / 1000).toFixed(0)} s; checking`,
    );
    const deadline = Date.now() + SETTLE_MS;
    for (const tenant of tenants) {
      const summary = await checkTenant(client, tenant, verdicts, deadline);
      const lost = tenant.submissions.reduce((n, s) => n + s.lost, 0);
      const replays = tenant.submissions.filter((s) => s.replayed).length;
      say(
        `  ${tenant.name}: ${summary.batches} batches (lost answers retried with their ` +
          `Idempotency-Key: ${lost}, answered by a replay: ${replays}), ${summary.failedItems} failed items`,
      );
    }
    await verdicts.check(`zero cross-tenant answers (${probes} probes)`, () => assert.deepEqual(leaks, []));
    const outside = log.failed.filter((r) => !insideFault(r, windows));
    const inside = log.failed.length - outside.length;
    say(
      `requests: ${log.answered} answered below 500, ${inside} failed (5xx or no answer) inside fault windows ` +
        `(+${FAULT_GRACE_MS / 1000} s), ${outside.length} outside`,
    );
    const byOutcome = new Map<string, number>();
    for (const r of log.failed) byOutcome.set(String(r.outcome), (byOutcome.get(String(r.outcome)) ?? 0) + 1);
    say(`  failures by outcome: ${JSON.stringify(Object.fromEntries(byOutcome))}`);
    for (const window of windows.filter((w) => w.kind === 'failover')) {
      const hit = log.failed.filter((r) => r.end >= window.start && r.start <= window.end + FAULT_GRACE_MS);
      const lastFailure = Math.max(window.end, ...hit.map((r) => r.end));
      const firstAccepted = (log.accepted ?? []).find((at) => at > window.end);
      say(
        `failover recovery: last 5xx or lost answer ${((lastFailure - window.start) / 1000).toFixed(1)} s ` +
          `after the fault began; first 202 after it at ` +
          `${firstAccepted === undefined ? 'never' : `${((firstAccepted - window.start) / 1000).toFixed(1)} s`}`,
      );
    }
    await verdicts.check('5xx and lost answers only inside fault windows', () => {
      assert.deepEqual(outside.slice(0, 5), []);
    });
    await verdicts.check(`faults injected: ${windows.length}`, () => {
      assert.equal(
        windows.length,
        Object.values(FAULTS).reduce((a, b) => a + b, 0),
      );
    });
    for (const member of cluster.members()) {
      await verdicts.check(`${member.name} ready at the end`, async () =>
        assert.ok(await cluster!.ready(member)),
      );
    }
  } catch (error) {
    verdicts.failures.push(`run aborted: ${(error as Error).stack ?? String(error)}`);
    say(`  FAILED run aborted: ${(error as Error).message}`);
  } finally {
    await cluster?.stop();
    await postgres.destroy();
  }
  if (cluster && verdicts.failures.length > 0) {
    const dir = path.join(os.tmpdir(), `chaos-${seed}-${Date.now()}`);
    cluster.saveLogs(dir);
    say(`process logs: ${dir}`);
  }
  say(`seed ${seed}`);
  say(`${verdicts.passed} passed, ${verdicts.failures.length} failed`);
  return verdicts.failures.length === 0 ? 0 : 1;
}

process.exitCode = await main();
