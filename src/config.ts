import path from 'node:path';
import { loadAnalysisConfig, type AnalysisConfig } from './analysis/analysis-config.ts';
import { ConfigError, flag, integer, optional } from './config-values.ts';
import { uiOidc, type UiOidcConfig } from './http/dashboard-config.ts';

export { ConfigError, flag, integer, optional };

/** Which parts of the service this process runs (docs/reference.md §1). */
export type Role = 'api' | 'worker' | 'all';

/** Everything the service reads from the environment, parsed once at start. */
export interface Config {
  /** `LOG_LEVEL`: pino's level for the service's log and its request log. */
  logLevel: LogLevel;
  port: number;
  host: string;
  role: Role;
  nodeEnv: string;
  databaseUrl: string | undefined;
  /** PostgreSQL schema for the service's tables (the job queue's is `<schema>_jobs`); server only. */
  databaseSchema: string | undefined;
  /**
   * `DATABASE_READ_URL`: a streaming replica of `databaseUrl`'s server that serves the export, the
   * search and product history, each read once the replica has replayed every write committed before
   * it began (docs/deployment.md#read-replica); unset, every read goes to `databaseUrl`.
   */
  databaseReadUrl: string | undefined;
  /** `DATABASE_READ_POOL_SIZE`: connections an API process opens to the replica, at most. */
  databaseReadPoolSize: number;
  dataDir: string;
  publicBaseUrl: string;
  maxBodyBytes: number;
  /** How long a client may take to send a whole request, headers and body. */
  requestTimeoutMs: number;
  auth: {
    jwtSecret: string | undefined;
    jwksUrl: string | undefined;
    publicKey: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
    tenantClaim: string;
    /** `AUTH_REQUIRE_EXP=true`: tokens without `exp` are refused. */
    requireExp: boolean;
  };
  limits: {
    ratePerMinute: number;
    maxPendingItems: number;
  };
  worker: {
    /** Batches one worker process handles at once (each holds one tenant). */
    concurrency: number;
    /** Items written per transaction. */
    chunkSize: number;
    /**
     * How often an idle worker asks the queue for a job. A submission wakes the workers of its own
     * process at once; a worker elsewhere (ROLE=worker) finds it by asking, so this is its delay.
     */
    pollMs: number;
    /**
     * With ROLE=all on a PostgreSQL server, the worker runs in a thread of its own, so batch
     * processing never holds up the API's event loop. The embedded database lives in one thread,
     * so there the worker shares the API's.
     */
    thread: boolean;
    /**
     * Days an ended batch (its status record and error records) is kept after it ended;
     * 0 keeps them for ever. The catalog is never deleted.
     */
    batchRetentionDays: number;
    /** Days a product's history entry is kept (docs/reference.md §11.3); 0 keeps them for ever. */
    historyRetentionDays: number;
  };
  analysis: AnalysisConfig & {
    /** Whether this API process loads the vision model and serves the analysis route. */
    enabled: boolean;
    allowPrivateHosts: boolean;
  };
  /** `UI_OIDC_*`: the dashboard's sign-in with the company's identity provider (docs/reference.md §11.9), or null. */
  uiOidc: UiOidcConfig | null;
  webhooks: {
    /** `WEBHOOK_ALLOW_PRIVATE_HOSTS=true`: endpoints may be plain http and reach private addresses. */
    allowPrivateHosts: boolean;
    /** Seconds before each retry of a failed attempt (docs/reference.md §10.1); after the last, `failed`. */
    retrySchedule: number[];
  };
}

/** The levels `LOG_LEVEL` may name (pino's). */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function logLevel(raw: string | undefined): LogLevel {
  const value = raw ?? 'info';
  const known = LOG_LEVELS.find((level) => level === value);
  if (!known) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  return known;
}

/**
 * Node's own default for receiving a whole request, which Fastify turns off: without it a client
 * trickling a body holds its connection, and the body buffered so far, for ever. Five minutes
 * carries a 64 MiB submission at under 2 Mbit/s.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

/** How often an idle worker polls the queue unless `WORKER_POLL_MS` says otherwise. */
export const DEFAULT_WORKER_POLL_MS = 500;

/** How long an ended batch can still be read unless `BATCH_RETENTION_DAYS` says otherwise. */
export const DEFAULT_BATCH_RETENTION_DAYS = 30;
/** How long a product's history entry is kept unless `HISTORY_RETENTION_DAYS` says otherwise (docs/reference.md §11.3). */
export const DEFAULT_HISTORY_RETENTION_DAYS = 90;

/** The retry delays of webhook deliveries unless `WEBHOOK_RETRY_SCHEDULE` says otherwise (docs/reference.md §10.1). */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

/**
 * `WEBHOOK_RETRY_SCHEDULE`: comma-separated seconds, each from 0 to a week. Fractions are allowed
 * (tests retry after 0.2 s); millisecond precision is what a delay can have.
 */
function retrySchedule(raw: string | undefined): number[] {
  if (raw === undefined) return DEFAULT_WEBHOOK_RETRY_SCHEDULE;
  const delays = raw.split(',').map((part) => part.trim());
  if (
    delays.length > 100 ||
    !delays.every((part) => /^\d+(\.\d{1,3})?$/.test(part) && Number(part) <= 604_800)
  ) {
    throw new ConfigError(
      'WEBHOOK_RETRY_SCHEDULE must be up to 100 comma-separated delays in seconds, each from 0 to 604800 (e.g. 5,300,1800)',
    );
  }
  return delays.map(Number);
}

/** Whether ROLE=all runs its worker in a thread of its own; the other roles have no worker to move. */
function workerThread(env: NodeJS.ProcessEnv, role: Role): boolean {
  const onServer = optional(env, 'DATABASE_URL') !== undefined;
  const thread = flag(env, 'WORKER_THREAD', onServer && role === 'all');
  if (thread && role !== 'all') {
    throw new ConfigError(`WORKER_THREAD=true applies only to ROLE=all (ROLE=${role} runs no worker thread)`);
  }
  if (thread && !onServer) {
    throw new ConfigError('WORKER_THREAD=true needs DATABASE_URL: the embedded database lives in one thread');
  }
  return thread;
}

function role(raw: string | undefined): Role {
  const value = raw ?? 'all';
  if (value === 'api' || value === 'worker' || value === 'all') return value;
  throw new ConfigError('ROLE must be api, worker or all');
}

function schemaName(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(raw)) {
    throw new ConfigError('DATABASE_SCHEMA must be a lower-case SQL identifier');
  }
  return raw;
}

/** Connections an API process opens to the replica unless `DATABASE_READ_POOL_SIZE` says otherwise. */
export const DEFAULT_DATABASE_READ_POOL_SIZE = 8;

/** `DATABASE_READ_URL`, which only a server has: the embedded database has no replica to read. */
function databaseReadUrl(env: NodeJS.ProcessEnv): string | undefined {
  const url = optional(env, 'DATABASE_READ_URL');
  if (url !== undefined && optional(env, 'DATABASE_URL') === undefined) {
    throw new ConfigError(
      'DATABASE_READ_URL needs DATABASE_URL: a replica reads from a PostgreSQL server, and without DATABASE_URL the service runs the embedded database',
    );
  }
  return url;
}

/** Reads the configuration from `env` (docs/reference.md §1 lists the variables and their defaults). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000);
  const host = optional(env, 'HOST') ?? '127.0.0.1';
  const serviceRole = role(optional(env, 'ROLE'));
  return {
    logLevel: logLevel(optional(env, 'LOG_LEVEL')),
    port,
    host,
    role: serviceRole,
    nodeEnv: optional(env, 'NODE_ENV') ?? 'development',
    databaseUrl: optional(env, 'DATABASE_URL'),
    databaseSchema: schemaName(optional(env, 'DATABASE_SCHEMA')),
    databaseReadUrl: databaseReadUrl(env),
    databaseReadPoolSize: integer(env, 'DATABASE_READ_POOL_SIZE', DEFAULT_DATABASE_READ_POOL_SIZE, 1, 100),
    dataDir: path.resolve(optional(env, 'DATA_DIR') ?? './data'),
    publicBaseUrl: (
      optional(env, 'PUBLIC_BASE_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`
    ).replace(/\/+$/, ''),
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 64 * 1024 * 1024, 32 * 1024 * 1024),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 1000),
    auth: {
      jwtSecret: optional(env, 'AUTH_JWT_SECRET'),
      jwksUrl: optional(env, 'AUTH_JWKS_URL'),
      publicKey: optional(env, 'AUTH_JWT_PUBLIC_KEY'),
      issuer: optional(env, 'AUTH_JWT_ISSUER'),
      audience: optional(env, 'AUTH_JWT_AUDIENCE'),
      tenantClaim: optional(env, 'AUTH_TENANT_CLAIM') ?? 'tenant_id',
      requireExp: flag(env, 'AUTH_REQUIRE_EXP', false),
    },
    limits: {
      ratePerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 120, 1),
      maxPendingItems: integer(env, 'MAX_PENDING_ITEMS', 200_000, 1),
    },
    worker: {
      concurrency: integer(env, 'WORKER_CONCURRENCY', 2, 1, 64),
      chunkSize: integer(env, 'WORKER_CHUNK_SIZE', 1000, 1),
      // pg-boss polls no more often than every 500 ms. A job sent by another process (an API, a
      // retry after a worker died) waits for the next poll, so it stays well within docs/reference.md §5's
      // two minutes.
      pollMs: integer(env, 'WORKER_POLL_MS', DEFAULT_WORKER_POLL_MS, 500, 30_000),
      thread: workerThread(env, serviceRole),
      batchRetentionDays: integer(env, 'BATCH_RETENTION_DAYS', DEFAULT_BATCH_RETENTION_DAYS, 0, 36_500),
      historyRetentionDays: integer(env, 'HISTORY_RETENTION_DAYS', DEFAULT_HISTORY_RETENTION_DAYS, 0, 36_500),
    },
    analysis: {
      enabled: flag(env, 'ANALYSIS_ENABLED', true),
      allowPrivateHosts: flag(env, 'ANALYSIS_ALLOW_PRIVATE_HOSTS', false),
      ...loadAnalysisConfig(env),
    },
    uiOidc: uiOidc(env),
    webhooks: {
      allowPrivateHosts: flag(env, 'WEBHOOK_ALLOW_PRIVATE_HOSTS', false),
      retrySchedule: retrySchedule(optional(env, 'WEBHOOK_RETRY_SCHEDULE')),
    },
  };
}
