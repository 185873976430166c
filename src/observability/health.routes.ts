import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { documented } from '../http/schemas.ts';
import type { Metrics } from './metrics.ts';

/** One dependency readiness depends on: its name and a probe that throws or answers false when down. */
export interface ReadinessCheck {
  name: string;
  probe: () => Promise<boolean>;
}

const HealthBody = Type.Object({ status: Type.String() });
const ReadyBody = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
  checks: Type.Record(Type.String(), Type.Union([Type.Literal('ok'), Type.Literal('failing')])),
});

/**
 * Probes and scrapes come every few seconds: their requests are logged only at `warn`, so they do
 * not drown the log at the default `info`. A `/readyz` that finds a dependency failing says so at
 * `warn`, naming it.
 */
const PROBE_LOG_LEVEL = 'warn';

/** `/healthz` (the process answers), `/readyz` (its dependencies answer) and `/metrics`. */
export async function healthRoutes(
  app: FastifyInstance,
  { checks, metrics }: { checks: ReadinessCheck[]; metrics: Metrics },
): Promise<void> {
  app.get(
    '/healthz',
    {
      logLevel: PROBE_LOG_LEVEL,
      schema: {
        tags: ['operations'],
        security: [],
        response: { 200: documented('The process is up', HealthBody) },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      logLevel: PROBE_LOG_LEVEL,
      schema: {
        tags: ['operations'],
        security: [],
        response: {
          200: documented('Every dependency answers', ReadyBody),
          503: documented('A dependency is failing; `checks` says which', ReadyBody),
        },
      },
    },
    async (request, reply) => {
      const results = await Promise.all(
        checks.map(async ({ name, probe }) => [name, await withinProbeTimeout(probe())] as const),
      );
      const ready = results.every(([, ok]) => ok);
      if (!ready) {
        const failing = results.filter(([, ok]) => !ok).map(([name]) => name);
        request.log.warn({ failing }, `not ready: ${failing.join(', ')} failing`);
      }
      return reply.code(ready ? 200 : 503).send({
        status: ready ? 'ready' : 'not_ready',
        checks: Object.fromEntries(results.map(([name, ok]) => [name, ok ? 'ok' : 'failing'])),
      });
    },
  );

  app.get('/metrics', { logLevel: PROBE_LOG_LEVEL, schema: { hide: true } }, async (_request, reply) => {
    return reply.type(metrics.registry.contentType).send(await metrics.render());
  });
}

/**
 * How long a readiness probe may take before it counts as failing. A database that does not
 * answer (a dead host, a pool with every connection taken) would otherwise hold each probe until
 * the supervisor's own timeout, which then says nothing of which dependency is down.
 */
const PROBE_TIMEOUT_MS = 2_000;

/** The probe's answer, or false when it throws or takes longer than {@link PROBE_TIMEOUT_MS}. */
async function withinProbeTimeout(answer: Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([answer.catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
