import { Type, type Static } from '@sinclair/typebox';

/**
 * A variant about to be added beside a stored one whose sku differs only by leading zeros
 * (docs/spreadsheets.md, "Leading zeros"). A spreadsheet program that reads a CSV without column
 * types turns the text `00102065` into the number `102065`; imported, that adds a second variant
 * to the product instead of updating the first. Both skus are valid, so this is a warning the preview
 * shows, never an item error.
 */
export const SkuWarningSchema = Type.Object(
  {
    field: Type.String({ description: 'The added variant’s sku, e.g. variants[0].sku' }),
    code: Type.Literal('sku_leading_zeros'),
    message: Type.String(),
    sku: Type.String({ description: 'The sku the item would add' }),
    stored_sku: Type.String({
      description: 'The product’s stored sku it equals once leading zeros are dropped',
    }),
  },
  { additionalProperties: false, title: 'PreviewWarning' },
);
export type SkuWarning = Static<typeof SkuWarningSchema>;

/** A sku without its leading zeros; a sku of zeros only keeps one, so `000` and `0` match. */
export const withoutLeadingZeros = (sku: string): string => sku.replace(/^0+(?=.)/, '');

/**
 * The warnings for the variants an item adds to a product (`added`, by their index in the item),
 * against the skus the product already has (`stored`): one per added sku that equals a stored sku
 * once leading zeros are dropped from both, naming the first such stored sku.
 */
export function leadingZeroWarnings(
  added: ReadonlyArray<{ index: number; sku: string }>,
  stored: Iterable<string>,
): SkuWarning[] {
  const byBareSku = new Map<string, string>();
  for (const sku of stored) {
    const bare = withoutLeadingZeros(sku);
    if (!byBareSku.has(bare)) byBareSku.set(bare, sku);
  }
  const warnings: SkuWarning[] = [];
  for (const { index, sku } of added) {
    const stored_sku = byBareSku.get(withoutLeadingZeros(sku));
    if (stored_sku === undefined || stored_sku === sku) continue;
    warnings.push({
      field: `variants[${index}].sku`,
      code: 'sku_leading_zeros',
      message:
        `sku "${sku}" would be added as a new variant, but the product has the sku "${stored_sku}", ` +
        'the same once leading zeros are dropped. If a spreadsheet program dropped them, set the sku ' +
        'column to text when opening the file (docs/spreadsheets.md, "Leading zeros").',
      sku,
      stored_sku,
    });
  }
  return warnings;
}
