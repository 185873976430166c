import path from 'node:path';
import prettier from 'prettier';
import { openApiDocument } from './openapi-document.ts';
import { renderApiReference } from './api-reference.ts';

/** docs/api.md as it should read now: rendered from the OpenAPI document, formatted as `npm run lint` checks. */
export async function apiReferencePage(document?: Record<string, unknown>): Promise<string> {
  const markdown = renderApiReference((document ?? (await openApiDocument())) as never);
  const file = path.join(import.meta.dirname, '..', 'docs', 'api.md');
  const options = await prettier.resolveConfig(file);
  return prettier.format(markdown, { ...options, filepath: file });
}
