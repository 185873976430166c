import { randomBytes, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { ALL_SCOPES } from '../../src/auth/verify-token.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { signServiceToken } from '../../src/auth/sign-token.ts';
import { startService, type Service } from '../../src/app/start-service.ts';
import { embeddedTemplate } from './embedded-template.ts';
import { dropServiceSchema } from './server-schema.ts';
import { lateBound, startedForFile } from './file-fixture.ts';

/** A service for one test file: the real app, worker, queue and database, and helpers to drive it. */
export interface TestService {
  service: Service;
  secret: string;
  /** A fresh tenant name, so each test owns its data. */
  tenant(prefix?: string): string;
  token(tenant: string, options?: { scope?: string; ttlSeconds?: number }): Promise<string>;
  /** Calls the app in process (Fastify inject); `json` is sent as application/json. */
  request(options: {
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    url: string;
    token?: string | null;
    json?: unknown;
    body?: string | Buffer;
    headers?: Record<string, string>;
  }): Promise<LightMyRequestResponse>;
  /** Submits items for `tenant` and returns the batch id (asserts the 202). */
  submit(token: string, items: unknown[], label?: string): Promise<string>;
  /** Polls a batch until it is terminal; returns its final status record. */
  waitForTerminal(token: string, batchId: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Every error record of a batch, walking the cursors. */
  allErrors(token: string, batchId: string, limit?: number): Promise<Array<Record<string, unknown>>>;
  stop(): Promise<void>;
}

const TERMINAL = new Set(['completed', 'completed_with_errors', 'failed']);

/**
 * Starts one service per entry of `envs` at once. Should any fail to start, the others are stopped
 * before the error is thrown: a file's \`after\` cannot stop services it never got, and their pools
 * and timers would keep its test process alive.
 */
export async function startTestServices<const E extends ReadonlyArray<Record<string, string>>>(
  envs: E,
): Promise<{ -readonly [K in keyof E]: TestService }> {
  const starts = await Promise.allSettled(envs.map((env) => startTestService(env)));
  const started = starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value] : []));
  const failed = starts.find((start) => start.status === 'rejected');
  if (!failed) return started as { -readonly [K in keyof E]: TestService };
  await Promise.all(started.map((service) => service.stop()));
  throw failed.reason;
}

/**
 * The setup of a file whose tests share services: one service per entry of `envs`, started before
 * the file's first test and stopped after its last, each usable at once as a `TestService`.
 */
export function testServicesForFile<const E extends ReadonlyArray<Record<string, string>>>(
  envs: E,
): { -readonly [K in keyof E]: TestService } {
  const started = startedForFile(
    () => startTestServices(envs),
    async (services) => {
      await Promise.all(services.map((service) => service.stop()));
    },
  );
  return envs.map((_, index) => lateBound(() => started()?.[index], 'a test service')) as {
    -readonly [K in keyof E]: TestService;
  };
}

/** The setup of a file whose tests share one service (see `testServicesForFile`). */
export const testServiceForFile = (env: Record<string, string> = {}): TestService =>
  testServicesForFile([env])[0];

/**
 * Starts the whole service in this process, on an in-memory PGlite by default, or on the server of
 * `TEST_DATABASE_URL` in a schema of its own (dropped at stop), so test files can run in parallel.
 * `adjust` changes the loaded configuration where a test needs what no variable allows.
 */
export async function startTestService(
  env: Record<string, string> = {},
  adjust: (config: Config) => Config = (config) => config,
  // Test files run two at a time, some with five services each: with the 12 connections an API
  // keeps by default they came close to the server's 100 (and once went over). A test of the
  // pool itself passes `null`: the service's default.
  // The analyzer (its vision model) is off unless a test of its route through the whole service asks.
  { keptConnections = 1, analyzer = false }: { keptConnections?: number | null; analyzer?: boolean } = {},
): Promise<TestService> {
  const secret = randomBytes(32).toString('hex');
  const serverUrl = process.env.TEST_DATABASE_URL;
  const schema = serverUrl ? `test_${randomBytes(6).toString('hex')}` : undefined;
  const config = adjust(
    loadConfig({
      NODE_ENV: 'test',
      AUTH_JWT_SECRET: secret,
      RATE_LIMIT_PER_MINUTE: '100000',
      PUBLIC_BASE_URL: 'http://service.test',
      ...(serverUrl ? { DATABASE_URL: serverUrl, DATABASE_SCHEMA: schema! } : {}),
      ...env,
    }),
  );
  const start = async (embeddedTemplate: Blob | undefined) =>
    startService(config, {
      listen: false,
      dataDir: null,
      logger: pino({ level: 'silent' }),
      embeddedTemplate,
      // The vision model has tests of its own; ingestion tests need neither its memory nor its threads.
      analyzer,
      keptConnections: keptConnections ?? undefined,
    });
  // The template only saves time: should loading it ever fail, start from an empty database.
  const service = serverUrl
    ? await start(undefined)
    : await start(await embeddedTemplate()).catch(() => start(undefined));
  const app = service.app!;

  const helpers: TestService = {
    service,
    secret,
    tenant: (prefix = 't') => `${prefix}-${randomUUID()}`,
    token: (tenant, { scope = ALL_SCOPES, ttlSeconds = 3600 } = {}) =>
      signServiceToken(config, { tenant, scope, ttlSeconds, createSecret: false }),
    async request({ method, url, token, json, body, headers = {} }) {
      const all: Record<string, string> = { ...headers };
      if (token) all.authorization = `Bearer ${token}`;
      if (json !== undefined) all['content-type'] ??= 'application/json';
      return app.inject({
        method,
        url,
        headers: all,
        payload: json !== undefined ? JSON.stringify(json) : body,
      });
    },
    async submit(token, items, label) {
      const res = await helpers.request({
        method: 'POST',
        url: `/products/ingestions${label === undefined ? '' : `?label=${encodeURIComponent(label)}`}`,
        token,
        json: { items },
      });
      if (res.statusCode !== 202) throw new Error(`submit answered ${res.statusCode}: ${res.body}`);
      return res.json<{ batch_id: string }>().batch_id;
    },
    async waitForTerminal(token, batchId, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await helpers.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token });
        const record = res.json<Record<string, unknown>>();
        if (TERMINAL.has(String(record.status))) return record;
        if (Date.now() > deadline) throw new Error(`batch ${batchId} not terminal: ${res.body}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async allErrors(token, batchId, limit = 500) {
      const records: Array<Record<string, unknown>> = [];
      let cursor: string | null = null;
      do {
        const query: string = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await helpers.request({
          method: 'GET',
          url: `/products/ingestions/${batchId}/errors?${query}`,
          token,
        });
        if (res.statusCode !== 200) throw new Error(`errors page answered ${res.statusCode}: ${res.body}`);
        const page = res.json<{ data: Array<Record<string, unknown>>; next_cursor: string | null }>();
        records.push(...page.data);
        cursor = page.next_cursor;
      } while (cursor);
      return records;
    },
    async stop() {
      await service.stop();
      if (serverUrl && schema) {
        await dropServiceSchema(serverUrl, schema);
      }
    },
  };
  return helpers;
}
