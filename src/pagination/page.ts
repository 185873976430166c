import { Type, type TProperties, type TSchema } from '@sinclair/typebox';

/** A page of a cursor-paginated list, as services return it and routes send it. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** `{data, next_cursor}`: one page of a cursor-paginated list. */
export function PageSchema<T extends TSchema>(item: T, title: string) {
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
