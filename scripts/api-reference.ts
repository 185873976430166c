/**
 * Renders the OpenAPI document as docs/api.md, the API reference a reader of the repository has
 * without running the service. Written from the document alone, so a route added later appears
 * once the page is regenerated (`npm run docs:api`); test/docs/api-reference.test.ts fails until then.
 */

type Schema = Record<string, unknown>;
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}
interface Response {
  description?: string;
  headers?: Record<string, { description?: string }>;
  content?: Record<string, { schema?: Schema }>;
}
interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, Response>;
}
interface Document {
  info?: { title?: string; version?: string };
  paths: Record<string, Record<string, Operation>>;
}

/** Enumerations longer than this get a section of their own, named where the field points. */
const INLINE_ENUM_MAX = 12;

/** Headers every operation shares, described once at the top rather than in every operation. */
const SHARED_HEADERS = new Set(['x-request-id']);

const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete'];

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const code = (text: unknown) => `\`${String(text)}\``;
const values = (list: unknown[]) => list.map((v) => code(JSON.stringify(v))).join(', ');

/** A GitHub-style heading anchor. */
export const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

/** Collects the long enumerations met while rendering, to list each once at the end. */
class Enumerations {
  readonly byName = new Map<string, unknown[]>();

  /** The name a long enumeration is listed under: its title (`FurnitureColor`), or the field's path. */
  refer(schema: Schema, path: string): string {
    const name = typeof schema.title === 'string' ? schema.title : path;
    this.byName.set(name, schema.enum as unknown[]);
    return `one of the ${(schema.enum as unknown[]).length} [${name}](#${anchorOf(name)}) values`;
  }
}

function typeOf(schema: Schema, path: string, enums: Enumerations): string {
  if (Array.isArray(schema.enum)) {
    return schema.enum.length <= INLINE_ENUM_MAX
      ? `one of ${values(schema.enum)}`
      : enums.refer(schema, path);
  }
  if ('const' in schema) return code(JSON.stringify(schema.const));
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) {
    // A union of single values (TypeBox's literal unions) reads as one enumeration.
    const single = union.map((s) =>
      'const' in s ? [s.const] : Array.isArray(s.enum) && s.enum.length === 1 ? s.enum : null,
    );
    if (single.every((v) => v !== null))
      return typeOf({ ...schema, anyOf: undefined, oneOf: undefined, enum: single.flat() }, path, enums);
    return union.map((s) => typeOf(s, path, enums)).join(' or ');
  }
  const types = [schema.type].flat().filter((t) => t !== undefined) as string[];
  if (types.length === 0) return 'any JSON value';
  return types
    .map((type) => {
      if (type === 'array') {
        const items = (schema.items ?? {}) as Schema;
        return isObject(items) ? 'array of objects' : `array of ${typeOf(items, `${path}[]`, enums)}`;
      }
      return typeof schema.format === 'string' && type === 'string' ? `string (${schema.format})` : type;
    })
    .join(' or ');
}

const isObject = (schema: Schema) => schema.type === 'object' && typeof schema.properties === 'object';

/** The limits a schema sets, in words. */
function limitsOf(schema: Schema): string[] {
  const limits: string[] = [];
  const add = (keyword: string, words: string) => {
    if (schema[keyword] !== undefined) limits.push(`${words} ${JSON.stringify(schema[keyword])}`);
  };
  add('minimum', 'at least');
  add('maximum', 'at most');
  add('minLength', 'length at least');
  add('maxLength', 'length at most');
  add('minItems', 'at least');
  add('maxItems', 'at most');
  if (typeof schema.pattern === 'string') limits.push(`matches ${code(schema.pattern)}`);
  add('default', 'default');
  if (schema.minItems !== undefined || schema.maxItems !== undefined) {
    const last = limits.length - 1;
    limits[last] = `${limits[last]} elements`;
  }
  if (schema.uniqueItems === true) limits.push('no value twice');
  return limits;
}

interface Row {
  path: string;
  type: string;
  required: boolean;
  notes: string;
}

/** One row per field, nested fields by path (`variants[].images[].url`). */
function fieldRows(schema: Schema, prefix: string, enums: Enumerations, rows: Row[] = []): Row[] {
  const target = schema.type === 'array' ? ((schema.items ?? {}) as Schema) : schema;
  const base = schema.type === 'array' ? `${prefix}[]` : prefix;
  if (!isObject(target)) return rows;
  const required = new Set((target.required as string[] | undefined) ?? []);
  for (const [name, property] of Object.entries(target.properties as Record<string, Schema>)) {
    const path = base === '' ? name : `${base}.${name}`;
    const description =
      typeof property.description === 'string' && !/^\w+$/.test(property.description)
        ? property.description
        : '';
    const notes = [description, ...limitsOf(property)].filter((n) => n !== '').join('; ');
    rows.push({ path, type: typeOf(property, path, enums), required: required.has(name), notes });
    const inner = property.type === 'array' ? ((property.items ?? {}) as Schema) : property;
    if (isObject(inner)) fieldRows(property, path, enums, rows);
  }
  return rows;
}

function fieldTable(schema: Schema, enums: Enumerations): string[] {
  const rows = fieldRows(schema, '', enums);
  if (rows.length === 0) return [`${typeOf(schema, 'body', enums)}.`, ''];
  return [
    '| field | type | required | notes |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      (r) => `| ${code(r.path)} | ${cell(r.type)} | ${r.required ? 'yes' : 'no'} | ${cell(r.notes)} |`,
    ),
    '',
  ];
}

function parameterTable(parameters: Parameter[], enums: Enumerations): string[] {
  const shown = parameters.filter((p) => !(p.in === 'header' && SHARED_HEADERS.has(p.name.toLowerCase())));
  if (shown.length === 0) return [];
  return [
    '**Parameters**',
    '',
    '| name | in | type | required | notes |',
    '| --- | --- | --- | --- | --- |',
    ...shown.map((p) => {
      const schema = p.schema ?? {};
      const notes = [p.description ?? '', ...limitsOf(schema)].filter((n) => n !== '').join('; ');
      const type = typeOf(schema, p.name, enums);
      return `| ${code(p.name)} | ${p.in} | ${cell(type)} | ${p.required ? 'yes' : 'no'} | ${cell(notes)} |`;
    }),
    '',
  ];
}

function responseLines(responses: Record<string, Response>, enums: Enumerations): string[] {
  const lines = ['**Responses**', '', '| status | meaning | body | headers |', '| --- | --- | --- | --- |'];
  const bodies: string[] = [];
  for (const [status, response] of Object.entries(responses)) {
    const types = Object.keys(response.content ?? {});
    const headers = Object.keys(response.headers ?? {}).filter((h) => !SHARED_HEADERS.has(h.toLowerCase()));
    lines.push(
      `| ${status} | ${cell(response.description ?? '')} | ${types.map(code).join(', ')} | ${headers.map(code).join(', ')} |`,
    );
    const json = response.content?.['application/json']?.schema;
    if (status.startsWith('2') && json) {
      bodies.push(`**${status} body** (\`application/json\`)`, '', ...fieldTable(json, enums));
    }
  }
  return [...lines, '', ...bodies];
}

function operationLines(method: string, path: string, operation: Operation, enums: Enumerations): string[] {
  const lines = [`### ${method.toUpperCase()} ${path}`, ''];
  if (operation.summary) lines.push(`${operation.summary}.`.replace(/\.\.$/, '.'), '');
  if (operation.description) lines.push(operation.description, '');
  lines.push(...parameterTable(operation.parameters ?? [], enums));
  for (const [type, { schema }] of Object.entries(operation.requestBody?.content ?? {})) {
    lines.push(`**Request body** (\`${type}\`${operation.requestBody?.required ? ', required' : ''})`, '');
    if (schema) lines.push(...fieldTable(schema, enums));
  }
  lines.push(...responseLines(operation.responses ?? {}, enums));
  return lines;
}

/** The operations of `document`, in its path order, methods in the usual order. */
function operationsOf(document: Document): Array<[string, string, Operation]> {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => METHOD_ORDER.includes(method))
      .sort(([a], [b]) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b))
      .map(([method, operation]) => [method, path, operation] as [string, string, Operation]),
  );
}

/** docs/api.md for `document`. */
export function renderApiReference(document: Document): string {
  const enums = new Enumerations();
  const operations = operationsOf(document);
  const groups = new Map<string, Array<[string, string, Operation]>>();
  for (const entry of operations) {
    const tag = entry[2].tags?.[0] ?? 'other';
    groups.set(tag, [...(groups.get(tag) ?? []), entry]);
  }
  const body: string[] = [];
  for (const [tag, entries] of groups) {
    body.push(`## ${tag.charAt(0).toUpperCase()}${tag.slice(1)}`, '');
    for (const [method, path, operation] of entries)
      body.push(...operationLines(method, path, operation, enums));
  }
  const index = operations.map(([method, path, operation]) => {
    const heading = `${method.toUpperCase()} ${path}`;
    return `| [${code(heading)}](#${anchorOf(heading)}) | ${cell(operation.summary ?? '')} |`;
  });
  const enumerations = [...enums.byName].flatMap(([name, list]) => [`### ${name}`, '', values(list), '']);
  return [
    '# API reference',
    '',
    '<!-- Generated by `npm run docs:api` from the OpenAPI document the service serves at',
    '     GET /openapi.json; edit the route schemas, not this file. -->',
    '',
    `${document.info?.title ?? 'The API'}, version ${document.info?.version ?? 'unversioned'}: every`,
    'operation, its parameters, bodies and answers, as `GET /openapi.json` describes them (browsable at',
    '`GET /docs` on a running service). What every operation shares — authentication and scopes, the',
    'problem+json errors, pagination, idempotency and limits — is in [api-conventions.md](api-conventions.md).',
    'Every operation takes an optional `X-Request-Id` header and answers with one.',
    '',
    '| operation | summary |',
    '| --- | --- |',
    ...index,
    '',
    ...body,
    ...(enumerations.length > 0 ? ['## Enumerations', '', ...enumerations] : []),
  ]
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()
    .concat('\n');
}
