import { Type, type TProperties, type TSchema } from '@sinclair/typebox';

import { FIELD_ERROR_CODES, type FieldErrorCode } from './errors.ts';

/** One field error: in a problem's `errors[]`, and in an item's record on the errors page. */
export const FieldErrorSchema = Type.Object(
  {
    field: Type.String(),
    code: Type.Unsafe<FieldErrorCode>({ type: 'string', enum: FIELD_ERROR_CODES }),
    message: Type.String(),
  },
  { additionalProperties: false },
);

/** RFC 7807 problem (spec §Errors), the error body of every ingestion and catalog operation. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String({ description: 'The request path' }),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { additionalProperties: false, title: 'Problem' },
);

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/** Documented error responses of a problem+json route, for its `response` schema. */
export function problemResponses(...statuses: Array<400 | 401 | 403 | 404 | 413 | 415 | 429>) {
  const texts: Record<number, string> = {
    400: 'Validation error or malformed JSON',
    401: 'Missing or invalid bearer token',
    403: 'Token without a tenant or without the required scope',
    404: 'Unknown id, or another tenant’s',
    413: 'Body too large',
    415: 'Body is not uncompressed application/json in UTF-8',
    429: 'Tenant rate or backlog limit reached',
  };
  const out: Record<string, unknown> = { default: problem('Unexpected error') };
  for (const status of statuses) out[String(status)] = problem(texts[status] ?? 'Error');
  return out;
}

/** `{data, next_cursor}`: one page of a cursor-paginated list. */
export function Page<T extends TSchema>(item: T, title: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as `cursor` for the next page; null on the last page',
      }),
    },
    { additionalProperties: false, title },
  );
}

/** `limit` and `cursor`, the query of every paginated list; unknown parameters are refused. */
export function PageQuery<E extends TProperties = Record<never, never>>(
  maxLimit: number,
  defaultLimit: number,
  extra: E = {} as E,
) {
  return Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit })),
      // A products cursor carries a 255-character external_id, up to 4 bytes a character, encoded.
      cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
      ...extra,
    },
    { additionalProperties: false },
  );
}
