import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import type { TSchema } from '@sinclair/typebox';
import { FullProductIngest, ProductVariantIngest } from '../../src/catalog/product-schema.ts';
import { PRODUCT_VIEW_SELECT_LIST } from '../../src/catalog/catalog.repository.ts';
import { mergeItems } from '../../src/catalog/merge-items.ts';
import { ingestParts, type StoredProduct } from '../../src/export/ingest-parts.ts';
import { PRODUCT_COLUMNS, VARIANT_COLUMNS, variantField } from '../../src/spreadsheets/sheet-layout.ts';

/**
 * The item schema (src/catalog/product-schema.ts) is the one source of the product and variant
 * fields. SQL must spell them out, and so must a few hot-path literals: each such list is held to
 * the schema here, so a field added to the schema but forgotten in a list fails this test instead
 * of being silently dropped on write, read or export.
 */

const PRODUCT_FIELDS = Object.keys(FullProductIngest.properties).filter((field) => field !== 'variants');
const VARIANT_FIELDS = Object.keys(ProductVariantIngest.properties);
/** Fields a text limit applies to: strings, enumerations included (the export's XLSX check). */
const textFields = (schema: { properties: Record<string, TSchema> }) =>
  Object.entries(schema.properties)
    .filter(([, property]) => (property as { type?: unknown }).type === 'string')
    .map(([field]) => field);

/** The text of every template literal in the function or constant `name` of `file`. */
function sqlOf(file: string, name: string): string {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  let found: ts.Node | undefined;
  source.forEachChild((node) => {
    if (ts.isFunctionDeclaration(node) && node.name?.text === name) found = node;
    if (ts.isVariableStatement(node)) {
      for (const declaration of node.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name) && declaration.name.text === name) found = declaration;
      }
    }
  });
  assert.ok(found, `${file} has no ${name}`);
  const texts: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isTemplateExpression(node) || ts.isNoSubstitutionTemplateLiteral(node)) texts.push(node.getText());
    else node.forEachChild(visit);
  };
  visit(found);
  return texts.join('\n');
}

/** The part of `sql` that `pattern`'s first group captures. */
function clause(sql: string, pattern: RegExp): string {
  const match = pattern.exec(sql);
  assert.ok(match?.[1], `no clause ${pattern} in:\n${sql}`);
  return match[1];
}

/** Fails naming every field of `fields` that `list` does not name as `prefix + field`. */
function assertNames(where: string, list: string, fields: readonly string[], prefix = ''): void {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const missing = fields.filter(
    (field) => !new RegExp(`(^|[^\\w.'])${escape(prefix + field)}(?![\\w])`).test(list),
  );
  assert.deepEqual(missing, [], `${where} lacks ${missing.join(', ')}`);
}

/** A value for every field of `schema`; only the names matter to the literals tested here. */
const sample = (schema: { properties: Record<string, TSchema> }): Record<string, unknown> =>
  Object.fromEntries(Object.keys(schema.properties).map((field) => [field, 'x']));
const IMAGES = [{ url: 'https://example.com/a.jpg' }];

const without = (fields: readonly string[], ...left: string[]) => fields.filter((f) => !left.includes(f));

describe('the field lists follow the item schema', () => {
  test('catalog.repository.ts: the products upsert', () => {
    const sql = sqlOf('src/catalog/catalog.repository.ts', 'upsertProducts');
    assertNames('INSERT INTO products', clause(sql, /INSERT INTO products AS p \(([^)]*)\)/), PRODUCT_FIELDS);
    assertNames(
      'its SELECT',
      clause(sql, /SELECT \$1, ([\s\S]*?)FROM json_to_recordset/),
      PRODUCT_FIELDS,
      'x.',
    );
    assertNames(
      'its recordset',
      clause(sql, /json_to_recordset\(\$2::json\)\s*AS x\(([^)]*)\)/),
      PRODUCT_FIELDS,
    );
    const update = clause(sql, /DO UPDATE SET([\s\S]*?)WHERE/);
    assertNames('its DO UPDATE SET', update, without(PRODUCT_FIELDS, 'external_id'));
    const compared = clause(sql, /WHERE \(([\s\S]*?)\)\s*IS DISTINCT FROM/);
    assertNames('its change check', compared, without(PRODUCT_FIELDS, 'external_id'), 'p.');
  });

  test('catalog.repository.ts: the variants upsert', () => {
    const sql = sqlOf('src/catalog/catalog.repository.ts', 'upsertVariants');
    assertNames('INSERT INTO variants', clause(sql, /INSERT INTO variants AS v \(([^)]*)\)/), VARIANT_FIELDS);
    assertNames(
      'its SELECT',
      clause(sql, /SELECT \$1, ([\s\S]*?)FROM json_to_recordset/),
      VARIANT_FIELDS,
      'x.',
    );
    assertNames(
      'its recordset',
      clause(sql, /json_to_recordset\(\$2::json\)\s*AS x\(([^)]*)\)/),
      VARIANT_FIELDS,
    );
    assertNames(
      'its DO UPDATE SET',
      clause(sql, /DO UPDATE SET([\s\S]*?)WHERE/),
      without(VARIANT_FIELDS, 'sku'),
    );
  });

  test('catalog.repository.ts: the product view the reads and the search select', () => {
    assertNames('PRODUCT_VIEW_SELECT_LIST', PRODUCT_VIEW_SELECT_LIST, PRODUCT_FIELDS, 'p.');
    const variant = clause(PRODUCT_VIEW_SELECT_LIST, /json_build_object\(\s*('sku'[\s\S]*?)'images'/);
    assertNames('its variants', variant, without(VARIANT_FIELDS, 'images'), 'v.');
    assertNames(
      'its variants',
      `${variant}'images'`,
      VARIANT_FIELDS.map((field) => `'${field}'`),
    );
  });

  test('catalog-state.repository.ts: the stored state a chunk merges on', () => {
    const file = 'src/catalog/catalog-state.repository.ts';
    const rows = sqlOf(file, 'readAsRows');
    const productBranch = clause(rows, /(SELECT NULL::text AS sku,[\s\S]*?)FROM unnest/);
    assertNames('readAsRows, product rows', productBranch, PRODUCT_FIELDS, 'x.');
    assertNames(
      'readAsRows, product rows',
      productBranch,
      without(VARIANT_FIELDS, ...PRODUCT_FIELDS, 'sku'),
      'AS ',
    );
    const variantBranch = clause(rows, /UNION ALL\s*SELECT (x\.sku,[\s\S]*?)\n\s*FROM \(/);
    assertNames('readAsRows, variant rows', variantBranch, VARIANT_FIELDS, 'x.');
    const columns = (list: string) => list.split(',').length;
    assert.equal(
      columns(variantBranch),
      columns(productBranch),
      'readAsRows: the two branches differ in width',
    );
    const json = sqlOf(file, 'readAsJson');
    assertNames(
      'readAsJson, products',
      clause(json, /json_build_array\(\s*(x\.external_id[^)]*)\)/),
      PRODUCT_FIELDS,
      'x.',
    );
    assertNames(
      'readAsJson, variants',
      clause(json, /json_build_array\(\s*(x\.sku[^)]*)\)/),
      VARIANT_FIELDS,
      'x.',
    );
  });

  test('export.repository.ts: the export page and its text-length check', () => {
    const file = 'src/export/export.repository.ts';
    const page = sqlOf(file, 'readExportPage');
    assertNames(
      'readExportPage, products',
      clause(page, /SELECT (p\.external_id[\s\S]*?)COALESCE/),
      PRODUCT_FIELDS,
      'p.',
    );
    const variant = clause(page, /json_build_object\(([\s\S]*?)\) ORDER BY/);
    assertNames('readExportPage, variants', variant, VARIANT_FIELDS, 'v.');
    const long = sqlOf(file, 'findProductWithLongText');
    assertNames('findProductWithLongText, products', long, textFields(FullProductIngest), 'char_length(p.');
    assertNames(
      'findProductWithLongText, variants',
      long,
      textFields(ProductVariantIngest),
      'char_length(v.',
    );
  });

  test('sheet-layout.ts: the spreadsheet columns', () => {
    assert.deepEqual([...PRODUCT_COLUMNS].sort(), [...PRODUCT_FIELDS].sort());
    assert.deepEqual(VARIANT_COLUMNS.map(variantField).sort(), without(VARIANT_FIELDS, 'images').sort());
  });

  // The hot-path literals of merge-items.ts and ingest-parts.ts are type-checked against the schema
  // for required fields only; these hold them to every field, an optional one included.
  test('merge-items.ts: the rows a chunk writes', () => {
    const item = {
      ...sample(FullProductIngest),
      variants: [{ ...sample(ProductVariantIngest), images: IMAGES }],
    };
    const merged = mergeItems([{ index: 0, item: item as unknown as FullProductIngest }]);
    assert.deepEqual(Object.keys(merged.products[0]!).sort(), [...PRODUCT_FIELDS].sort());
    assert.deepEqual(
      without(Object.keys(merged.variants[0]!), 'external_id').sort(),
      [...VARIANT_FIELDS].sort(),
    );
  });

  test('ingest-parts.ts: the items an export writes', () => {
    const stored = {
      ...sample(FullProductIngest),
      variants: [{ ...sample(ProductVariantIngest), images: IMAGES }],
    };
    const [part] = ingestParts(stored as unknown as StoredProduct);
    assert.deepEqual(without(Object.keys(part!), 'variants').sort(), [...PRODUCT_FIELDS].sort());
    assert.deepEqual(Object.keys(part!.variants[0]!).sort(), [...VARIANT_FIELDS].sort());
  });
});
