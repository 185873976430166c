import { Type, type Static } from '@sinclair/typebox';
import { FIELD_ERROR_CODES } from '../validation/item-errors.ts';
import { StringEnum } from '../validation/string-enum.ts';
import { ERRORS_CSV_COLUMNS } from './errors-csv.ts';

/** The most fields and sample indices the summary lists per code. */
export const SUMMARY_SAMPLES = 5;

/** `GET /products/ingestions/{batch_id}/errors/summary` (docs/reference.md §10.4). */
export const ErrorSummarySchema = Type.Object(
  {
    failed_items: Type.Integer({ description: 'Failed items listed so far' }),
    data: Type.Array(
      Type.Object(
        {
          code: StringEnum(FIELD_ERROR_CODES),
          count: Type.Integer({ description: 'Errors with this code (an item may have several)' }),
          fields: Type.Array(Type.String(), {
            maxItems: SUMMARY_SAMPLES,
            description: 'The fields most errors of this code name, most first; ties by field',
          }),
          sample_indices: Type.Array(Type.Integer(), {
            maxItems: SUMMARY_SAMPLES,
            description: 'The lowest indices of items with an error of this code, ascending',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'By count, most first, then by code' },
    ),
  },
  { additionalProperties: false, title: 'ErrorSummary' },
);
/** A batch's errors summed up by code. */
export type ErrorSummary = Static<typeof ErrorSummarySchema>;

/** What the errors route answers as `text/csv`, for the OpenAPI document. */
export const ErrorsCsvSchema = Type.String({
  description: `RFC 4180 with CRLF line ends; header row \`${ERRORS_CSV_COLUMNS.join(',')}\`, then one row per error of every failed item, in index order`,
});
