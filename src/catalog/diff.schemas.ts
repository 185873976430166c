import { Type } from '@sinclair/typebox';
import { StringEnum } from '../validation/string-enum.ts';

/** The operations of a diff element (docs/reference.md §11.2, §11.3). */
export const DIFF_OPS = ['add', 'change', 'remove'] as const;

/**
 * One element of a diff, as the preview (docs/reference.md §11.2) and the product history (docs/reference.md §11.3) send it. One object
 * rather than a union per `op`: the serializer writes it field by field, and the description says
 * which fields each `op` carries.
 */
export const DiffElementSchema = Type.Object(
  {
    path: Type.String({
      description:
        'The changed path in the syntax of error fields (`name`, `variants[0].price`, `variants[1]`, `variants[0].images[2]`); `""` for a created product, `variants` for a deleted variant',
    }),
    op: StringEnum(DIFF_OPS, {
      description:
        '`add`: a new product, variant or image (`to` is the whole of it, no `from`); `change`: `from` the stored value, `to` the value after the merge; `remove`: a variant deleted (`from` is the whole of it, no `to`)',
    }),
    sku: Type.Optional(Type.String({ description: 'The variant the element is about' })),
    url: Type.Optional(Type.String({ description: 'The image the element is about' })),
    from: Type.Optional(Type.Unknown({ description: 'The stored value; `null` is a value' })),
    to: Type.Optional(Type.Unknown({ description: 'The value after the change; `null` is a value' })),
  },
  { additionalProperties: false, title: 'DiffElement' },
);
