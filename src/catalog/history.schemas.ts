import { Type, type Static } from '@sinclair/typebox';
import { PageQuery, PageSchema } from '../pagination/page.ts';
import { StringEnum } from '../validation/string-enum.ts';
import { DiffElementSchema } from './diff.schemas.ts';

/** The actions of a history entry (docs/reference.md §11.3). */
export const HISTORY_ACTIONS = ['create', 'update', 'delete'] as const;

/** One recorded change of a product (docs/reference.md §11.3). */
export const HistoryEntrySchema = Type.Object(
  {
    at: Type.String({ format: 'date-time', description: 'When the change was applied' }),
    action: StringEnum(HISTORY_ACTIONS),
    batch_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The batch that made the change; null for a delete through the API',
    }),
    index: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The index of the item within its batch; null for a delete through the API',
    }),
    label: Type.Optional(Type.String({ description: 'The batch’s label, when it has one' })),
    diff: Type.Array(DiffElementSchema, {
      description:
        'As in a preview; for create one `add` of the whole product at path "", for delete []; a variant deleted through the API is one `remove` at path "variants"',
    }),
  },
  { additionalProperties: false, title: 'ProductHistoryEntry' },
);
export type HistoryEntry = Static<typeof HistoryEntrySchema>;

/** `limit` (1–500, default 100) and `cursor`. */
export const HistoryQuery = PageQuery(500, 100);

/** A page of a product's history, newest first. */
export const HistoryPage = PageSchema(HistoryEntrySchema, 'ProductHistoryPage');
