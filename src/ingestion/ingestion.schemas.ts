import { Type, type Static } from '@sinclair/typebox';
import { FullProductIngest } from '../catalog/product-schema.ts';
import { PageQuery, PageSchema } from '../pagination/page.ts';
import { ItemErrorRecord } from '../validation/item-errors.ts';
import { StringEnum } from '../validation/string-enum.ts';
import { BATCH_STATUSES } from './batch-status.ts';

/** Most items one submission may carry. */
export const MAX_ITEMS_PER_BATCH = 1000;

/**
 * What `POST /products/ingestions` validates: the envelope only. Items of any JSON type are
 * accepted here and judged one by one by the worker (partial acceptance, docs/reference.md §4).
 */
export const IngestionEnvelope = Type.Object(
  { items: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_ITEMS_PER_BATCH }) },
  { additionalProperties: false },
);

/** What the OpenAPI document shows for the same body: the items' own schema, checked later. */
export const IngestionRequest = Type.Object(
  {
    items: Type.Array(FullProductIngest, {
      minItems: 1,
      maxItems: MAX_ITEMS_PER_BATCH,
      description: 'Each item is validated asynchronously; invalid items are reported on the errors page',
    }),
  },
  { additionalProperties: false, title: 'IngestionRequest' },
);

/** The 202 answer to a submission (spec: IngestionAccepted). */
export const IngestionAccepted = Type.Object(
  { batch_id: Type.String(), received_count: Type.Integer() },
  { additionalProperties: false, title: 'IngestionAccepted' },
);
export type AcceptedBatch = Static<typeof IngestionAccepted>;

/** The 202's `Location`: where the batch's status is read. */
export const LocationHeader = {
  Location: Type.String({
    format: 'uri-reference',
    description: 'The batch’s status record, relative: /products/ingestions/{batch_id}',
  }),
};

const Timestamp = Type.String({ format: 'date-time' });

/** Longest batch label, in Unicode code points (docs/reference.md §11.1). */
export const MAX_LABEL_LENGTH = 200;

/**
 * A batch label: 1–200 code points (Ajv counts code points, not UTF-16 units), no control character
 * (Unicode category Cc: U+0000–U+001F, U+007F–U+009F), which would garble a log line or a table.
 */
export const BatchLabel = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: MAX_LABEL_LENGTH,
    pattern: '^\\P{Cc}*$',
    'x-pattern-rule': 'must not hold control characters',
    description,
  });

/** A batch's status record (spec; docs/reference.md §6: all nine fields, always present; §11.1 `label` when set). */
export const BatchStatusRecord = Type.Object(
  {
    batch_id: Type.String(),
    status: StringEnum(BATCH_STATUSES),
    received_count: Type.Integer({ description: 'Items in the submission' }),
    created_at: Timestamp,
    validated_ok: Type.Integer({ description: 'Items that passed schema validation so far' }),
    validated_failed: Type.Integer({ description: 'Items that failed schema validation so far' }),
    upserted: Type.Integer({ description: 'Items written to the catalog so far' }),
    failed: Type.Integer({ description: 'Items that failed at any stage so far' }),
    updated_at: Timestamp,
    label: Type.Optional(Type.String({ description: 'The label given at submission; absent when none was' })),
  },
  { additionalProperties: false, title: 'BatchStatus' },
);

/** The status record of a batch, as the API returns it. */
export type BatchRecord = Static<typeof BatchStatusRecord>;

/** The errors page and the batch list: `{data, next_cursor}`. */
export const BatchErrorPage = PageSchema(ItemErrorRecord, 'BatchErrorPage');
export const BatchPage = PageSchema(BatchStatusRecord, 'BatchPage');

/** Path and query parameters of the batch routes; unknown query parameters are refused. */
export const BatchParams = Type.Object({ batch_id: Type.String() });
export const ErrorsQuery = PageQuery(500, 500);
export const BatchListQuery = PageQuery(100, 20, {
  status: Type.Optional(StringEnum(BATCH_STATUSES)),
  label: Type.Optional(
    BatchLabel(
      'Only batches whose label starts with this text (case-sensitive; % and _ are plain characters)',
    ),
  ),
});

/**
 * The submission's query: an optional `label` (docs/reference.md §11.1). Other parameters are ignored, as
 * they were before labels existed, so no client that sends one is refused now.
 */
export const SubmissionQuery = Type.Object({
  label: Type.Optional(
    BatchLabel(
      'A name for the batch, shown in its status record, the batch list and webhooks; not part of the Idempotency-Key hash',
    ),
  ),
});

/** Longest `Idempotency-Key`. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The submission's optional `Idempotency-Key` (docs/reference.md §10.2): 1–255 visible ASCII characters. */
export const IdempotencyKeyHeaders = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      pattern: `^[\\x21-\\x7E]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`,
      description:
        'Makes a retry safe: the same key with the same body bytes within 24 h answers the first 202 again (Idempotent-Replayed: true) and stores nothing; with another body, 422',
    }),
  ),
});

/** The header of a 202 that repeats the first answer to an Idempotency-Key. */
export const IdempotentReplayedHeader = {
  'Idempotent-Replayed': Type.Literal('true', {
    description:
      'Present on a replay: this is the first answer to the Idempotency-Key, and no batch was stored now',
  }),
};
