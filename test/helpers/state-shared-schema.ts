import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { dropServiceSchema } from './server-schema.ts';
import { ALL_SCOPES, startTestService, type TestService } from './test-service.ts';

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
  const key = new TextEncoder().encode(secret);
  const services: TestService[] = [];
  const shared: SharedServices = {
    services,
    schema,
    tenant: (prefix = 't') => `${prefix}-${randomUUID()}`,
    async token(tenant) {
      return new SignJWT({ tenant_id: tenant, scope: ALL_SCOPES })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(key);
    },
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
