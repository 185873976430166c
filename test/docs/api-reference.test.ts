/** docs/api.md is the API reference of the routes as they are: generated from the served OpenAPI document. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { testServiceForFile } from '../helpers/test-service.ts';
import { openApiDocument } from '../../scripts/openapi-document.ts';
import { apiReferencePage } from '../../scripts/api-reference-page.ts';

const svc = testServiceForFile();
const ANALYSIS_PATH = '/analysis/stageability/multiple';

void test('the document docs/api.md is generated from is the one GET /openapi.json serves', async () => {
  const res = await svc.request({ method: 'GET', url: '/openapi.json', token: null });
  assert.equal(res.statusCode, 200);
  const served = res.json<{ paths: Record<string, unknown> }>();
  const generated = (await openApiDocument()) as { paths: Record<string, unknown> };
  // The test service runs without the vision model, so it serves no analysis route; the generator
  // registers that route without the model, so the reference has it.
  assert.ok(generated.paths[ANALYSIS_PATH], 'the analysis operation is in the reference');
  assert.equal(served.paths[ANALYSIS_PATH], undefined);
  const { [ANALYSIS_PATH]: _analysis, ...paths } = generated.paths;
  assert.deepEqual({ ...generated, paths }, served);
});

void test('docs/api.md is up to date: a route added or changed since fails here until `npm run docs:api`', async () => {
  const current = await readFile(path.join(import.meta.dirname, '..', '..', 'docs', 'api.md'), 'utf8');
  const expected = await apiReferencePage();
  assert.ok(current === expected, 'docs/api.md is out of date: run `npm run docs:api` and commit the result');
  const served = (await openApiDocument()) as { paths: Record<string, Record<string, unknown>> };
  for (const [route, methods] of Object.entries(served.paths)) {
    for (const method of Object.keys(methods)) {
      assert.ok(
        current.includes(`### ${method.toUpperCase()} ${route}\n`),
        `${method} ${route} has a section`,
      );
    }
  }
});
