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

/** `/healthz` (the process answers), `/readyz` (its dependencies answer) and `/metrics`. */
export async function healthRoutes(
  app: FastifyInstance,
  { checks, metrics }: { checks: ReadinessCheck[]; metrics: Metrics },
): Promise<void> {
  // Readiness is logged when it changes, not on every probe: once when a check starts failing
  // (with why), once when all pass again. While starting (never ready yet: the model loading) that
  // is expected, so it is info, not a warning every start would raise.
  let wasReady: boolean | undefined;
  let everReady = false;
  app.get(
    '/healthz',
    {
      // Probes come every few seconds: their request lines are logged at debug.
      config: { routineRequests: true },
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
      // Probes come every few seconds: their request lines are logged at debug.
      config: { routineRequests: true },
      schema: {
        tags: ['operations'],
        security: [],
        response: {
          200: documented('Every dependency answers', ReadyBody),
          503: documented('A dependency is failing; `checks` says which', ReadyBody),
        },
      },
    },
    async (_request, reply) => {
      const results = await Promise.all(
        checks.map(async ({ name, probe }) => [name, await withinProbeTimeout(probe)] as const),
      );
      const failing = Object.fromEntries(results.filter(([, why]) => why !== null));
      const ready = Object.keys(failing).length === 0;
      if (!ready && wasReady !== false) {
        const names = Object.keys(failing).join(', ');
        if (everReady) app.log.warn({ failing }, `not ready: ${names} failing`);
        else app.log.info({ failing }, `not ready yet: ${names} starting`);
      } else if (ready && wasReady === false) {
        app.log.info(everReady ? 'ready again' : 'ready');
      }
      wasReady = ready;
      everReady ||= ready;
      return reply.code(ready ? 200 : 503).send({
        status: ready ? 'ready' : 'not_ready',
        checks: Object.fromEntries(results.map(([name, why]) => [name, why === null ? 'ok' : 'failing'])),
      });
    },
  );

  app.get(
    '/metrics',
    { config: { routineRequests: true }, schema: { hide: true } },
    async (_request, reply) => {
      return reply.type(metrics.registry.contentType).send(await metrics.render());
    },
  );
}

/**
 * How long a readiness probe may take before it counts as failing. A database that does not
 * answer (a dead host, a pool with every connection taken) would otherwise hold each probe until
 * the supervisor's own timeout, which then says nothing of which dependency is down.
 */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Null when `probe` answers true within {@link PROBE_TIMEOUT_MS}; else why not, in words for the log.
 */
async function withinProbeTimeout(probe: () => Promise<boolean>): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS);
  });
  const answer = Promise.resolve()
    .then(probe)
    .then(
      (ok) => (ok ? null : 'answered not ready'),
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}
