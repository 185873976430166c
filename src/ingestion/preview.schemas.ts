import { Type, type Static } from '@sinclair/typebox';
import { DiffElementSchema } from '../catalog/diff.schemas.ts';
import { SkuWarningSchema } from '../catalog/sku-lookalikes.ts';
import { FieldErrorSchema } from '../validation/item-errors.ts';
import { StringEnum } from '../validation/string-enum.ts';

/** What a preview says an item would do (docs/reference.md §10.3). */
export const PREVIEW_ACTIONS = ['create', 'update', 'unchanged', 'invalid'] as const;
export type PreviewAction = (typeof PREVIEW_ACTIONS)[number];

/** One item of a preview (docs/reference.md §10.3, with §11.2's values). */
export const PreviewEntrySchema = Type.Object(
  {
    index: Type.Integer({ description: 'Index of the item within the body' }),
    external_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The item’s external_id, when it is a string',
    }),
    action: StringEnum(PREVIEW_ACTIONS),
    changes: Type.Array(Type.String(), {
      description:
        'Paths whose stored value would change, in the syntax of error fields (variants[1] is a new variant, variants[0].images[2] a new image); [] unless the action is update',
    }),
    diff: Type.Array(DiffElementSchema, {
      description: 'One element per path of `changes`, in the same order, with the values (`from` → `to`)',
    }),
    errors: Type.Array(FieldErrorSchema, {
      description: 'What the batch’s errors page would list for this item; [] when valid',
    }),
    warnings: Type.Optional(
      Type.Array(SkuWarningSchema, {
        description:
          'Present only when there are some: an added variant whose sku equals a sku of the product once leading zeros are dropped. The item stays valid.',
      }),
    ),
  },
  { additionalProperties: false, title: 'PreviewItem' },
);
export type PreviewEntry = Static<typeof PreviewEntrySchema>;

/** The 200 answer of a preview. */
export const PreviewResponse = Type.Object(
  {
    received_count: Type.Integer(),
    summary: Type.Object(
      {
        create: Type.Integer(),
        update: Type.Integer(),
        unchanged: Type.Integer(),
        invalid: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    data: Type.Array(PreviewEntrySchema),
  },
  { additionalProperties: false, title: 'IngestionPreview' },
);
/** The answer to a preview: one entry per item, in order, and the count of each action. */
export type PreviewResult = Static<typeof PreviewResponse>;
