import { afterEach } from 'node:test';
import { dropSchemaWithJobs } from './drop-schema.ts';

/** The tests of this file (each test file runs in a process of its own) that did not pass. */
const failedTests: string[] = [];
afterEach((t) => {
  // TestContext.passed (Node 20.12+), which @types/node does not declare yet.
  if ((t as { passed?: boolean }).passed === false) failedTests.push(t.name);
});

/**
 * Drops a service's schema on a PostgreSQL server, with its job queue's (`<schema>_jobs`); when a
 * test of this file has failed, keeps both and names them, so the failure can be inspected (as
 * pg-boss's tests keep theirs).
 */
export async function dropServiceSchema(serverUrl: string, schema: string): Promise<void> {
  if (failedTests.length > 0) {
    console.error(
      `kept schema ${schema} (and ${schema}_jobs) after failed test(s): ${failedTests.join('; ')}`,
    );
    return;
  }
  await dropSchemaWithJobs(serverUrl, schema);
}
