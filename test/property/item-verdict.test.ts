import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FIELD_ERROR_CODES } from '../../src/validation/item-errors.ts';
import { createItemValidator, MAX_ERRORS_PER_ITEM } from '../../src/validation/item-validator.ts';
import { storable } from '../../src/ingestion/batches/batch-progress.repository.ts';
import { asSent, createCatalogModel } from '../../reliability/catalog-model.ts';
import { anyItemArb, propertyRuns } from '../helpers/catalog-arbitraries.ts';
import { errorShapes } from '../helpers/catalog-fixtures.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * Property: any JSON value as an item is judged "valid" or gets errors from the closed code set,
 * each naming a path that exists in the item — or, for `required`, the missing key under a parent
 * object that exists. A non-object is `invalid_type` at `""`.
 */

const validate = createItemValidator();
/** The codes validation can give: `sku_conflict` and `internal_error` come from writing. */
const VALIDATION_CODES: readonly string[] = FIELD_ERROR_CODES.filter(
  (code) => code !== 'sku_conflict' && code !== 'internal_error',
);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The values `path` can name in `value`. A path is ambiguous when a key holds `.` or `[`, so every
 * reading is followed: an array index `[n]`, or (after a `.`, except at the root) an own key.
 */
function valuesAt(value: unknown, path: string, root = true): unknown[] {
  if (path === '') return [value];
  if (Array.isArray(value)) {
    const index = /^\[(\d+)\]/.exec(path);
    if (!index || Number(index[1]) >= value.length) return [];
    return valuesAt(value[Number(index[1])], path.slice(index[0].length), false);
  }
  if (!isObject(value)) return [];
  const rest = root ? path : path.startsWith('.') ? path.slice(1) : null;
  if (rest === null) return [];
  return Object.keys(value)
    .filter((key) => rest.startsWith(key) && ['', '.', '['].includes(rest.charAt(key.length)))
    .flatMap((key) => valuesAt(value[key], rest.slice(key.length), false));
}

/** Whether `field` names a key missing from an object that exists in `item` (a `required` error). */
function namesMissingKey(item: unknown, field: string): boolean {
  const splits = [{ parent: '', key: field }];
  for (let dot = field.indexOf('.'); dot !== -1; dot = field.indexOf('.', dot + 1)) {
    splits.push({ parent: field.slice(0, dot), key: field.slice(dot + 1) });
  }
  return splits.some(({ parent, key }) =>
    valuesAt(item, parent).some((object) => isObject(object) && !Object.hasOwn(object, key)),
  );
}

/** Asserts the verdict's shape for one item (as the service receives it). */
function assertVerdict(item: unknown): void {
  const verdict = validate(item);
  if (verdict.ok) {
    assert.ok(isObject(item), 'only an object can be valid');
    return;
  }
  const { errors } = verdict;
  assert.ok(errors.length >= 1 && errors.length <= MAX_ERRORS_PER_ITEM, `${errors.length} errors`);
  if (!isObject(item)) {
    assert.deepEqual({ field: errors[0]!.field, code: errors[0]!.code }, { field: '', code: 'invalid_type' });
    // Besides the type, only strings PostgreSQL cannot store are named (in an array item).
    for (const error of errors.slice(1)) assert.equal(error.code, 'invalid_format', JSON.stringify(error));
  }
  for (const error of errors) {
    const where = `${JSON.stringify(error)} in ${JSON.stringify(item)}`;
    assert.ok(VALIDATION_CODES.includes(error.code), `code outside the closed set: ${where}`);
    assert.equal(typeof error.message, 'string');
    assert.ok(error.message.length > 0, `empty message: ${where}`);
    if (error.code === 'required') assert.ok(namesMissingKey(item, error.field), `no such parent: ${where}`);
    else assert.ok(valuesAt(item, error.field).length > 0, `no such path: ${where}`);
  }
  const pairs = errors.map(({ field, code }) => `${code} ${field}`);
  assert.equal(new Set(pairs).size, pairs.length, `an error reported twice: ${pairs.join(', ')}`);
}

void test('any JSON value is valid or has errors of the closed set at paths of the item', (t) => {
  fc.assert(
    fc.property(anyItemArb, (item) => assertVerdict(asSent(item))),
    propertyRuns(t, 1500),
  );
});

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

void test('through the API, every item of a random batch is judged as the validator judges it', async (t) => {
  const { seed } = propertyRuns(t, 1);
  const items = fc.sample(anyItemArb, { seed, numRuns: 300 });
  const token = await svc.token(svc.tenant('verdict'));
  const model = createCatalogModel(validate);
  const expected = model.applyBatch(items);
  const batchId = await svc.submit(token, items);
  const final = await svc.waitForTerminal(token, batchId);
  const { status, received_count, validated_ok, validated_failed, upserted, failed } = final;
  assert.deepEqual(
    { status, received_count, validated_ok, validated_failed, upserted, failed },
    expected.counters,
  );
  const records = await svc.allErrors(token, batchId);
  assert.deepEqual(errorShapes(records), expected.failures);
  // Messages too: an invalid item's record shows the validator's words (sku_conflict is the model's).
  for (const record of records) {
    const verdict = validate(asSent(items[record.index as number]));
    if (verdict.ok) continue;
    const stored = verdict.errors.map(({ field, code, message }) => ({
      field: storable(field),
      code,
      message: storable(message),
    }));
    assert.deepEqual(record.errors, stored);
  }
});
