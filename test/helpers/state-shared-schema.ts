import { randomBytes, randomUUID } from 'node:crypto';
import { signServiceToken } from '../../src/auth/sign-token.ts';
import { loadConfig } from '../../src/config.ts';
import { dropServiceSchema } from './server-schema.ts';
import { ALL_SCOPES } from '../../src/auth/verify-token.ts';
import { startTestService, type TestService } from './test-service.ts';

/** Why the tests that need several services on one database skip on the embedded database. */
export const NEEDS_SERVER = 'needs a shared PostgreSQL server (set TEST_DATABASE_URL)';

/** Several services sharing one PostgreSQL schema, as a scaled deployment runs them. */
export interface SharedServices {
  services: TestService[];
  schema: string;
  /** A token every one of the services accepts (they share one secret). */
  token(tenant: string): Promise<string>;
  tenant(prefix?: string): string;
  /** Stops every service, then drops the shared schema and its job queue's schema. */
  stop(): Promise<void>;
}

/**
 * Starts one service per entry of `envs` on the server of `TEST_DATABASE_URL`, all in one fresh
 * schema and with one JWT secret, so limits, locks and the queue are shared exactly as between
 * processes. Only for the server: an embedded database belongs to a single process.
 */
export async function startSharedServices(envs: Array<Record<string, string>>): Promise<SharedServices> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error(NEEDS_SERVER);
  const schema = `test_shared_${randomBytes(6).toString('hex')}`;
  const secret = randomBytes(32).toString('hex');
  const services: TestService[] = [];
  const shared: SharedServices = {
    services,
    schema,
    tenant: (prefix = 't') => `${prefix}-${randomUUID()}`,
    token: (tenant) =>
      signServiceToken(loadConfig({ AUTH_JWT_SECRET: secret }), {
        tenant,
        scope: ALL_SCOPES,
        ttlSeconds: 3600,
        createSecret: false,
      }),
    async stop() {
      const results = await Promise.allSettled(services.map((service) => service.stop()));
      await dropServiceSchema(serverUrl, schema);
      const failure = results.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    },
  };
  try {
    // One after the other: the first one creates the schema, the others find it migrated.
    for (const env of envs) {
      services.push(await startTestService({ ...env, DATABASE_SCHEMA: schema, AUTH_JWT_SECRET: secret }));
    }
  } catch (error) {
    await shared.stop().catch(() => undefined);
    throw error;
  }
  return shared;
}
