import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import {
  FURNITURE_COLORS,
  FURNITURE_STYLES,
  FURNITURE_SUB_TYPES,
  FURNITURE_TYPES,
} from '../../src/catalog/enums.ts';
import {
  allProducts,
  counterValues,
  fieldCodes,
  ingestAndRead,
  sortedFieldCodes,
  type FieldCode,
} from '../helpers/assertions.ts';

/** The worker's item validation, through the real API (docs/reference.md §5, §7). */

type Item = Record<string, unknown>;
type Variant = Record<string, unknown>;

const svc = testServiceForFile();

/** A valid product, changed by `edit` (which may delete or replace anything). */
function itemWith(edit: (item: Item, variants: Variant[]) => void): Item {
  const item = product();
  const variants = item.variants as Variant[];
  edit(item, variants);
  return item;
}

const images = (n: number) => Array.from({ length: n }, (_, i) => ({ url: `https://cdn.example/${i}.jpg` }));

interface Case {
  name: string;
  item: Item;
  /** The exact `{field, code}` list of the item's error record; `null` for an item that is valid. */
  errors: FieldCode[] | null;
  /** The record's external_id / sku when they are not simply the item's and its first variant's. */
  externalId?: string | null;
  sku?: string | null;
}

/** One bad item per code of docs/reference.md §5 (except sku_conflict, which needs stored data), and valid edges. */
function cases(): Case[] {
  const list: Case[] = [];
  const add = (name: string, errors: FieldCode[] | null, edit: (item: Item, variants: Variant[]) => void) =>
    list.push({ name, item: itemWith(edit), errors });
  const err = (field: string, code: string): FieldCode[] => [{ field, code }];

  add('required: name missing', err('name', 'required'), (i) => delete i.name);
  add('required: description missing', err('description', 'required'), (i) => delete i.description);
  add('required: sub_type missing', err('sub_type', 'required'), (i) => delete i.sub_type);
  add(
    'required: variants[0].price missing',
    err('variants[0].price', 'required'),
    (_, v) => delete v[0]!.price,
  );
  add(
    'required: variants[0].brand missing',
    err('variants[0].brand', 'required'),
    (_, v) => delete v[0]!.brand,
  );
  add('required: variants[0].sku missing', err('variants[0].sku', 'required'), (_, v) => delete v[0]!.sku);
  add('required: image url missing', err('variants[0].images[0].url', 'required'), (_, v) => {
    v[0]!.images = [{ angle: 10 }];
  });
  list.push({
    name: 'required: external_id missing',
    item: itemWith((i) => delete i.external_id),
    errors: err('external_id', 'required'),
    externalId: null,
  });
  list.push({
    name: 'required: variants missing',
    item: itemWith((i) => delete i.variants),
    errors: err('variants', 'required'),
    sku: null,
  });

  add('unknown_field at top level', err('foo', 'unknown_field'), (i) => (i.foo = 1));
  add('unknown_field in a variant', err('variants[0].foo', 'unknown_field'), (_, v) => (v[0]!.foo = 'x'));
  add('unknown_field in an image', err('variants[0].images[0].foo', 'unknown_field'), (_, v) => {
    v[0]!.images = [{ url: 'https://cdn.example/a.jpg', foo: null }];
  });
  add('unknown_field: an own __proto__ property', err('__proto__', 'unknown_field'), (i) => {
    Object.defineProperty(i, '__proto__', { value: { admin: true }, enumerable: true });
  });
  add('unknown_field: constructor', err('variants[0].constructor', 'unknown_field'), (_, v) => {
    v[0]!['constructor'] = 'x';
  });
  add(
    'unknown_field: tenant_id in an item does not choose the tenant',
    err('tenant_id', 'unknown_field'),
    (i) => {
      i.tenant_id = 'someone-else';
    },
  );

  add('invalid_type: name is a number', err('name', 'invalid_type'), (i) => (i.name = 5));
  add('invalid_type: description is null', err('description', 'invalid_type'), (i) => (i.description = null));
  add(
    'invalid_type: price is a string',
    err('variants[0].price', 'invalid_type'),
    (_, v) => (v[0]!.price = '12'),
  );
  add(
    'invalid_type: depth is a boolean',
    err('variants[0].depth', 'invalid_type'),
    (_, v) => (v[0]!.depth = true),
  );
  add(
    'invalid_type (not invalid_value): style is a number',
    err('style', 'invalid_type'),
    (i) => (i.style = 5),
  );
  add(
    'invalid_type (not invalid_value): color is an array',
    err('variants[0].color', 'invalid_type'),
    (_, v) => {
      v[0]!.color = ['Beige'];
    },
  );
  add('invalid_type: angle is a string', err('variants[0].images[0].angle', 'invalid_type'), (_, v) => {
    v[0]!.images = [{ url: 'https://cdn.example/a.jpg', angle: '90' }];
  });
  add(
    'invalid_type: images is null',
    err('variants[0].images', 'invalid_type'),
    (_, v) => (v[0]!.images = null),
  );
  add(
    'invalid_type: images is an object',
    err('variants[0].images', 'invalid_type'),
    (_, v) => (v[0]!.images = {}),
  );
  add('invalid_type: an image is a string', err('variants[0].images[0]', 'invalid_type'), (_, v) => {
    v[0]!.images = ['https://cdn.example/a.jpg'];
  });
  list.push({
    name: 'invalid_type: variants is an object',
    item: itemWith((i) => (i.variants = {})),
    errors: err('variants', 'invalid_type'),
    sku: null,
  });
  list.push({
    name: 'invalid_type: a variant is a string',
    item: itemWith((i) => (i.variants = ['sku-1'])),
    errors: err('variants[0]', 'invalid_type'),
    sku: null,
  });
  list.push({
    name: 'invalid_type: external_id is a number (record external_id null)',
    item: itemWith((i) => (i.external_id = 12345)),
    errors: err('external_id', 'invalid_type'),
    externalId: null,
  });

  add('invalid_value: style in the wrong case', err('style', 'invalid_value'), (i) => (i.style = 'modern'));
  add('invalid_value: type not in the list', err('type', 'invalid_value'), (i) => (i.type = 'Sofas'));
  add('invalid_value: sub_type with a trailing space', err('sub_type', 'invalid_value'), (i) => {
    i.sub_type = 'Sofa ';
  });
  add(
    'invalid_value: color Teal',
    err('variants[0].color', 'invalid_value'),
    (_, v) => (v[0]!.color = 'Teal'),
  );

  add('invalid_format: item_url not a URL', err('variants[0].item_url', 'invalid_format'), (_, v) => {
    v[0]!.item_url = 'not a url';
  });
  add('invalid_format: item_url relative', err('variants[0].item_url', 'invalid_format'), (_, v) => {
    v[0]!.item_url = '/products/sofa';
  });
  add(
    'invalid_format: item_url with a character no URI holds',
    err('variants[0].item_url', 'invalid_format'),
    (_, v) => {
      v[0]!.item_url = 'https://example.com/sofa<1>';
    },
  );
  add(
    'invalid_format: image url with a % that escapes nothing',
    err('variants[0].images[0].url', 'invalid_format'),
    (_, v) => {
      v[0]!.images = [{ url: 'https://example.com/100%zz.jpg' }];
    },
  );
  add(
    'invalid_format: image url without a host',
    err('variants[0].images[0].url', 'invalid_format'),
    (_, v) => {
      v[0]!.images = [{ url: 'https://' }];
    },
  );
  list.push({
    name: 'invalid_format: external_id empty',
    item: itemWith((i) => (i.external_id = '')),
    errors: err('external_id', 'invalid_format'),
    externalId: '',
  });
  list.push({
    name: 'invalid_format: external_id blank',
    item: itemWith((i) => (i.external_id = '   ')),
    errors: err('external_id', 'invalid_format'),
    externalId: '   ',
  });
  const longId = 'x'.repeat(256);
  list.push({
    name: 'invalid_format: external_id of 256 characters',
    item: itemWith((i) => (i.external_id = longId)),
    errors: err('external_id', 'invalid_format'),
    externalId: longId,
  });
  list.push({
    name: 'invalid_format: sku blank',
    item: itemWith((_, v) => (v[0]!.sku = '\t ')),
    errors: err('variants[0].sku', 'invalid_format'),
    sku: '\t ',
  });
  list.push({
    name: 'invalid_format: sku of 256 characters',
    item: itemWith((_, v) => (v[0]!.sku = 's'.repeat(256))),
    errors: err('variants[0].sku', 'invalid_format'),
    sku: 's'.repeat(256),
  });
  add('invalid_format: a name of 65,536 characters', err('name', 'invalid_format'), (i) => {
    i.name = 'n'.repeat(65_536);
  });
  add('invalid_format: a brand of 65,536 characters', err('variants[0].brand', 'invalid_format'), (_, v) => {
    v[0]!.brand = 'b'.repeat(65_536);
  });

  add('https_required: item_url http', err('variants[0].item_url', 'https_required'), (_, v) => {
    v[0]!.item_url = 'http://x.com/a';
  });
  add('https_required: image url ftp', err('variants[0].images[0].url', 'https_required'), (_, v) => {
    v[0]!.images = [{ url: 'ftp://x.com/i.jpg' }];
  });
  add('https_required: item_url mailto', err('variants[0].item_url', 'https_required'), (_, v) => {
    v[0]!.item_url = 'mailto:shop@example.com';
  });

  add('out_of_range: price -1', err('variants[0].price', 'out_of_range'), (_, v) => (v[0]!.price = -1));
  add(
    'out_of_range: weight -0.01',
    err('variants[0].weight', 'out_of_range'),
    (_, v) => (v[0]!.weight = -0.01),
  );
  add('out_of_range: angle 361', err('variants[0].images[0].angle', 'out_of_range'), (_, v) => {
    v[0]!.images = [{ url: 'https://cdn.example/a.jpg', angle: 361 }];
  });
  add('out_of_range: angle -0.5', err('variants[0].images[0].angle', 'out_of_range'), (_, v) => {
    v[0]!.images = [{ url: 'https://cdn.example/a.jpg', angle: -0.5 }];
  });

  add('too_few_items: variants empty', err('variants', 'too_few_items'), (i) => (i.variants = []));
  add(
    'too_few_items: images empty',
    err('variants[0].images', 'too_few_items'),
    (_, v) => (v[0]!.images = []),
  );
  add(
    'too_many_items: 11 images',
    err('variants[0].images', 'too_many_items'),
    (_, v) => (v[0]!.images = images(11)),
  );

  list.push({
    name: 'duplicate_key: the same sku twice points at the later one',
    item: itemWith((i, v) => (i.variants = [v[0], variant({ sku: v[0]!.sku })])),
    errors: err('variants[1].sku', 'duplicate_key'),
  });
  add(
    'duplicate_key: the same image url twice in a variant',
    err('variants[0].images[1].url', 'duplicate_key'),
    (_, v) => {
      v[0]!.images = [{ url: 'https://cdn.example/a.jpg', angle: 0 }, { url: 'https://cdn.example/a.jpg' }];
    },
  );

  // Valid edges: these must be upserted.
  add(
    'valid: angle null',
    null,
    (_, v) => (v[0]!.images = [{ url: 'https://cdn.example/a.jpg', angle: null }]),
  );
  add(
    'valid: angle 360',
    null,
    (_, v) => (v[0]!.images = [{ url: 'https://cdn.example/a.jpg', angle: 360 }]),
  );
  add('valid: angle 0', null, (_, v) => (v[0]!.images = [{ url: 'https://cdn.example/a.jpg', angle: 0 }]));
  add('valid: angle omitted', null, (_, v) => (v[0]!.images = [{ url: 'https://cdn.example/a.jpg' }]));
  add('valid: images omitted', null, (_, v) => delete v[0]!.images);
  add('valid: 10 images', null, (_, v) => (v[0]!.images = images(10)));
  add('valid: empty name, description and brand', null, (i, v) => {
    i.name = '';
    i.description = '';
    v[0]!.name = '';
    v[0]!.brand = '';
  });
  add('valid: zero measures and price', null, (_, v) => {
    Object.assign(v[0]!, { depth: 0, height: 0, width: 0, weight: 0, price: 0 });
  });
  add('valid: a name of 65,535 characters', null, (i) => (i.name = 'n'.repeat(65_535)));
  add(
    'valid: an external_id of 255 characters',
    null,
    (i) => (i.external_id = `${randomUUID()}${'e'.repeat(219)}`),
  );
  add(
    'valid: an external_id of 255 astral characters',
    null,
    (i) => (i.external_id = `${randomUUID()}${'🛋'.repeat(219)}`),
  );
  list.push({
    name: 'invalid_format: an external_id of 256 astral characters',
    item: itemWith((i) => (i.external_id = '🛋'.repeat(256))),
    errors: err('external_id', 'invalid_format'),
    externalId: '🛋'.repeat(256),
  });
  add('invalid_format: a URL with white space', err('variants[0].item_url', 'invalid_format'), (_, v) => {
    v[0]!.item_url = 'https://shop.example/a b';
  });
  add('valid: an upper-case HTTPS scheme', null, (_, v) => (v[0]!.item_url = 'HTTPS://shop.example/a'));
  add('valid: two variants with images', null, (i, v) => (i.variants = [v[0], variant()]));
  return list;
}

void describe('one minimal bad item per error code, and valid edges, in one batch', () => {
  const table = cases();
  let records: Map<number, Record<string, unknown>>;
  let final: Record<string, unknown>;
  let token: string;

  before(async () => {
    token = await svc.token(svc.tenant('codes'));
    const result = await ingestAndRead(
      svc,
      token,
      table.map((c) => c.item),
    );
    final = result.final;
    records = new Map(result.errors.map((record) => [record.index as number, record]));
  });

  void test('the batch counts every invalid item as failed and every valid one as upserted', () => {
    const bad = table.filter((c) => c.errors !== null).length;
    const good = table.length - bad;
    assert.equal(final.status, 'completed_with_errors');
    assert.deepEqual(counterValues(final), [table.length, good, bad, good, bad]);
    assert.deepEqual(
      [...records.keys()],
      table.flatMap((c, index) => (c.errors === null ? [] : [index])),
    );
  });

  table.forEach((c, index) => {
    void test(c.name, async () => {
      const record = records.get(index);
      if (c.errors === null) {
        assert.equal(record, undefined, `valid item reported: ${JSON.stringify(record)}`);
        const res = await svc.request({
          method: 'GET',
          url: `/products/${encodeURIComponent(c.item.external_id as string)}`,
          token,
        });
        assert.equal(res.statusCode, 200, res.body);
        const stored = res.json<Item>();
        assert.equal(stored.name, c.item.name);
        assert.equal(stored.description, c.item.description);
        const sent = c.item.variants as Variant[];
        assert.deepEqual(
          (stored.variants as Variant[]).map((v) => [v.sku, v.name, v.brand, v.price, v.depth, v.item_url]),
          sent.map((v) => [v.sku, v.name, v.brand, v.price, v.depth, v.item_url]),
        );
        assert.deepEqual(
          (stored.variants as Variant[]).map((v) => v.images),
          sent.map((v) =>
            ((v.images as Array<{ url: string; angle?: number | null }> | undefined) ?? []).map((image) => ({
              url: image.url,
              angle: image.angle ?? null,
            })),
          ),
        );
        return;
      }
      assert.ok(record, `no error record for item ${index}`);
      assert.deepEqual(Object.keys(record).sort(), ['errors', 'external_id', 'index', 'sku']);
      assert.deepEqual(fieldCodes(record.errors), c.errors);
      const item = c.item;
      const firstSku = (item.variants as Variant[] | undefined)?.[0]?.sku;
      assert.equal(record.external_id, c.externalId !== undefined ? c.externalId : item.external_id);
      assert.equal(record.sku, c.sku !== undefined ? c.sku : typeof firstSku === 'string' ? firstSku : null);
    });
  });
});

void describe('several defects in one item', () => {
  void test('every error of an item is reported: three defects, three errors', async () => {
    const token = await svc.token(svc.tenant('three'));
    const item = itemWith((i, v) => {
      i.name = 5;
      v[0]!.color = 'Teal';
      v[0]!.price = -1;
    });
    const { final, errors } = await ingestAndRead(svc, token, [item]);
    assert.equal(final.status, 'failed');
    assert.deepEqual(counterValues(final), [1, 0, 1, 0, 1]);
    assert.equal(errors.length, 1);
    assert.deepEqual(
      sortedFieldCodes(fieldCodes(errors[0]!.errors)),
      sortedFieldCodes([
        { field: 'name', code: 'invalid_type' },
        { field: 'variants[0].color', code: 'invalid_value' },
        { field: 'variants[0].price', code: 'out_of_range' },
      ]),
    );
  });

  void test('defects at every level are all reported', async () => {
    const token = await svc.token(svc.tenant('levels'));
    const item = itemWith((i, v) => {
      delete i.description;
      i.extra = true;
      v[0]!.item_url = 'http://shop.example/a';
      v[0]!.images = [{ url: 'https://cdn.example/a.jpg', angle: 400, note: 'x' }];
      i.variants = [v[0], variant({ sku: v[0]!.sku, width: -3 })];
    });
    const { errors } = await ingestAndRead(svc, token, [item]);
    assert.equal(errors.length, 1);
    assert.deepEqual(
      sortedFieldCodes(fieldCodes(errors[0]!.errors)),
      sortedFieldCodes([
        { field: 'description', code: 'required' },
        { field: 'extra', code: 'unknown_field' },
        { field: 'variants[0].item_url', code: 'https_required' },
        { field: 'variants[0].images[0].angle', code: 'out_of_range' },
        { field: 'variants[0].images[0].note', code: 'unknown_field' },
        { field: 'variants[1].width', code: 'out_of_range' },
        { field: 'variants[1].sku', code: 'duplicate_key' },
      ]),
    );
  });

  void test('more than 50 defects report exactly the first 50', async () => {
    const token = await svc.token(svc.tenant('fifty'));
    const item = product();
    for (let n = 0; n < 60; n++) item[`extra_${String(n).padStart(2, '0')}`] = n;
    const { errors } = await ingestAndRead(svc, token, [item]);
    assert.equal(errors.length, 1);
    const reported = fieldCodes(errors[0]!.errors);
    assert.equal(reported.length, 50);
    assert.deepEqual(
      reported,
      Array.from({ length: 50 }, (_, n) => ({
        field: `extra_${String(n).padStart(2, '0')}`,
        code: 'unknown_field',
      })),
    );
  });

  void test('a non-finite number (1e400) fails on its field', async () => {
    const token = await svc.token(svc.tenant('finite'));
    const item = product();
    const json = JSON.stringify({ items: [item] }).replace('"price":1299.99', '"price":1e400');
    const res = await svc.request({
      method: 'POST',
      url: '/products/ingestions',
      token,
      body: json,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 202, res.body);
    const batchId = res.json<{ batch_id: string }>().batch_id;
    const final = await svc.waitForTerminal(token, batchId);
    assert.deepEqual(counterValues(final), [1, 0, 1, 0, 1]);
    const [record] = await svc.allErrors(token, batchId);
    const reported = fieldCodes(record!.errors);
    assert.equal(reported.length, 1);
    assert.equal(reported[0]!.field, 'variants[0].price');
    assert.ok(['invalid_type', 'out_of_range'].includes(reported[0]!.code), reported[0]!.code);
  });
});

void describe('the record’s external_id and sku (docs/reference.md §7)', () => {
  void test('sku of the variant the first error is about, else of the first variant, else null', async () => {
    const token = await svc.token(svc.tenant('keys'));
    const second = variant({ price: -5 });
    const aboutSecond = product({ variants: [variant(), second] });
    const topLevel = product({ name: 7, variants: [variant(), variant()] });
    const secondWithoutSku = variant();
    delete secondWithoutSku.sku;
    const fallback = product({ variants: [variant(), secondWithoutSku] });
    const noSkuAnywhere = product({ name: 7, variants: [variant({ sku: 17 })] });
    const notAString = product({ external_id: ['x'], variants: 'none' });
    const items = [aboutSecond, topLevel, fallback, noSkuAnywhere, notAString];
    const { errors } = await ingestAndRead(svc, token, items);
    const skuOf = (item: Item, v: number) => (item.variants as Variant[])[v]!.sku;
    assert.deepEqual(
      errors.map((r) => [r.index, r.external_id, r.sku]),
      [
        [0, aboutSecond.external_id, second.sku],
        [1, topLevel.external_id, skuOf(topLevel, 0)],
        [2, fallback.external_id, skuOf(fallback, 0)],
        [3, noSkuAnywhere.external_id, null],
        [4, null, null],
      ],
    );
    assert.deepEqual(fieldCodes(errors[2]!.errors), [{ field: 'variants[1].sku', code: 'required' }]);
  });
});

void describe('sku_conflict', () => {
  void test('a sku of another product stored earlier: variants[0].sku, and nothing of the item is stored', async () => {
    const token = await svc.token(svc.tenant('conflict'));
    const owner = product();
    const ownerSku = (owner.variants as Variant[])[0]!.sku as string;
    assert.equal((await ingestAndRead(svc, token, [owner])).final.status, 'completed');
    const before = (
      await svc.request({ method: 'GET', url: `/products/${owner.external_id as string}`, token })
    ).json();

    const fresh = variant();
    const intruder = product({ variants: [variant({ sku: ownerSku, price: 1 }), fresh] });
    const { final, errors } = await ingestAndRead(svc, token, [intruder]);
    assert.equal(final.status, 'failed');
    assert.equal(final.upserted, 0);
    assert.equal(final.failed, 1);
    assert.equal(errors.length, 1);
    assert.deepEqual(fieldCodes(errors[0]!.errors), [{ field: 'variants[0].sku', code: 'sku_conflict' }]);
    assert.equal(errors[0]!.external_id, intruder.external_id);
    assert.equal(errors[0]!.sku, ownerSku);

    const missing = await svc.request({
      method: 'GET',
      url: `/products/${intruder.external_id as string}`,
      token,
    });
    assert.equal(missing.statusCode, 404);
    const after = (
      await svc.request({ method: 'GET', url: `/products/${owner.external_id as string}`, token })
    ).json();
    assert.deepEqual(after, before);
    // The intruder's other sku was not stored either: a third product may take it.
    const third = await ingestAndRead(svc, token, [product({ variants: [fresh] })]);
    assert.equal(third.final.status, 'completed');
  });

  void test('within one batch: item 0 takes a sku, item 1 of another product using it fails', async () => {
    const token = await svc.token(svc.tenant('conflict-batch'));
    const first = product();
    const sku = (first.variants as Variant[])[0]!.sku as string;
    const second = product({ variants: [variant({ sku })] });
    const samePrdAgain = { ...first, name: 'Renamed' };
    const { final, errors } = await ingestAndRead(svc, token, [first, second, samePrdAgain]);
    assert.equal(final.status, 'completed_with_errors');
    assert.equal(final.received_count, 3);
    assert.equal(final.upserted, 2);
    assert.equal(final.failed, 1);
    assert.equal((final.validated_ok as number) + (final.validated_failed as number), 3);
    assert.deepEqual(
      errors.map((r) => [r.index, r.external_id, r.sku, fieldCodes(r.errors)]),
      [[1, second.external_id, sku, [{ field: 'variants[0].sku', code: 'sku_conflict' }]]],
    );
    assert.deepEqual(
      (await allProducts(svc, token)).map((p) => [p.external_id, p.name]),
      [[first.external_id, 'Renamed']],
    );
  });

  void test('the message names the product that owns the sku, stored or earlier in the batch', async () => {
    const token = await svc.token(svc.tenant('conflict-owner'));
    const owner = product({ external_id: 'owner-1', variants: [variant({ sku: 'taken-1' })] });
    assert.equal((await ingestAndRead(svc, token, [owner])).final.status, 'completed');
    const items = [
      product({ external_id: 'intruder', variants: [variant({ sku: 'taken-1' })] }),
      product({ external_id: 'first', variants: [variant({ sku: 'fresh-1' })] }),
      product({ external_id: 'second', variants: [variant({ sku: 'ok-2' }), variant({ sku: 'fresh-1' })] }),
    ];
    const { errors } = await ingestAndRead(svc, token, items);
    assert.deepEqual(
      errors.map((r) => [r.index, r.errors]),
      [
        [
          0,
          [
            {
              field: 'variants[0].sku',
              code: 'sku_conflict',
              message: 'sku "taken-1" already belongs to the product "owner-1" of this tenant.',
            },
          ],
        ],
        [
          2,
          [
            {
              field: 'variants[1].sku',
              code: 'sku_conflict',
              message: 'sku "fresh-1" already belongs to the product "first" of this tenant.',
            },
          ],
        ],
      ],
    );
  });

  void test('the same sku under another tenant is no conflict', async () => {
    const a = await svc.token(svc.tenant('a'));
    const b = await svc.token(svc.tenant('b'));
    const sku = `shared-${randomUUID()}`;
    assert.equal(
      (await ingestAndRead(svc, a, [product({ variants: [variant({ sku })] })])).final.status,
      'completed',
    );
    assert.equal(
      (await ingestAndRead(svc, b, [product({ variants: [variant({ sku })] })])).final.status,
      'completed',
    );
  });
});

void test('an invalid item changes nothing stored', async () => {
  const token = await svc.token(svc.tenant('unchanged'));
  const original = product();
  assert.equal((await ingestAndRead(svc, token, [original])).final.status, 'completed');
  const url = `/products/${original.external_id as string}`;
  const before = await svc.request({ method: 'GET', url, token });
  assert.equal(before.statusCode, 200);

  const patch = {
    ...original,
    name: 'Should not be stored',
    variants: [
      { ...(original.variants as Variant[])[0], price: -1, images: [{ url: 'https://cdn.example/new.jpg' }] },
    ],
  };
  const { final } = await ingestAndRead(svc, token, [patch]);
  assert.equal(final.status, 'failed');
  const after = await svc.request({ method: 'GET', url, token });
  assert.deepEqual(after.json(), before.json());
});

void test('every enumeration value is accepted exactly as the spec writes it', async () => {
  const token = await svc.token(svc.tenant('enums'));
  const count = Math.max(
    FURNITURE_STYLES.length,
    FURNITURE_TYPES.length,
    FURNITURE_SUB_TYPES.length,
    FURNITURE_COLORS.length,
  );
  const items = Array.from({ length: count }, (_, n) =>
    product({
      style: FURNITURE_STYLES[n % FURNITURE_STYLES.length],
      type: FURNITURE_TYPES[n % FURNITURE_TYPES.length],
      sub_type: FURNITURE_SUB_TYPES[n % FURNITURE_SUB_TYPES.length],
      variants: [variant({ color: FURNITURE_COLORS[n % FURNITURE_COLORS.length] })],
    }),
  );
  const { final, errors } = await ingestAndRead(svc, token, items);
  assert.deepEqual(errors, []);
  assert.equal(final.status, 'completed');
  assert.deepEqual(counterValues(final), [count, count, 0, count, 0]);
  const stored = await allProducts(svc, token);
  assert.equal(stored.length, count);
  const distinct = (values: unknown[]) => [...new Set(values)].sort();
  assert.deepEqual(distinct(stored.map((p) => p.style)), [...FURNITURE_STYLES].sort());
  assert.deepEqual(distinct(stored.map((p) => p.type)), [...FURNITURE_TYPES].sort());
  assert.deepEqual(distinct(stored.map((p) => p.sub_type)), [...FURNITURE_SUB_TYPES].sort());
  assert.deepEqual(
    distinct(stored.flatMap((p) => (p.variants as Variant[]).map((v) => v.color))),
    [...FURNITURE_COLORS].sort(),
  );
  // The spec's lists, independently of the code's: a sample of tricky spellings.
  for (const value of [
    'Mid-Century Modern',
    'Sofas & Loveseats',
    "Baker's Rack",
    'Wardrobe/Armoire',
    'Chaise-Lounge',
  ]) {
    assert.ok(
      stored.some((p) => p.style === value || p.type === value || p.sub_type === value),
      `${value} stored`,
    );
  }
});

void test('an enumeration value off only in case or spacing suggests the exact one; others do not', async () => {
  const token = await svc.token(svc.tenant('enum-hint'));
  const items = [
    product({ style: 'mid century  modern' }),
    product({ type: 'sofas&loveseats', sub_type: 'Sofa ' }),
    product({ style: 'Victorian', variants: [variant({ color: 'NAVY' })] }),
  ];
  const { errors } = await ingestAndRead(svc, token, items);
  // Up to 12 values are listed whole (docs/reference.md §11.8); longer enumerations are named, with the closest.
  // Each names the value sent (docs/reference.md §12.2) and, for a long enumeration, the page listing it.
  const styles = `values (exact, case-sensitive): ${FURNITURE_STYLES.map((v) => JSON.stringify(v)).join(', ')}`;
  const types = `values (exact, case-sensitive): ${FURNITURE_TYPES.map((v) => JSON.stringify(v)).join(', ')}`;
  const named = (count: number, name: string) =>
    `${count} ${name} values (exact, case-sensitive, listed at /problems/validation-error#${name})`;
  assert.deepEqual(
    errors.map((r) => [r.index, r.errors]),
    [
      [
        0,
        [
          {
            field: 'style',
            code: 'invalid_value',
            message: `style "mid century  modern" is not one of the FurnitureStyle ${styles}; did you mean "Mid-Century Modern"?`,
          },
        ],
      ],
      [
        1,
        [
          {
            field: 'type',
            code: 'invalid_value',
            message: `type "sofas&loveseats" is not one of the FurnitureType ${types}; did you mean "Sofas & Loveseats"?`,
          },
          {
            field: 'sub_type',
            code: 'invalid_value',
            message: `sub_type "Sofa " is not one of the ${named(FURNITURE_SUB_TYPES.length, 'FurnitureSubType')}; closest: "Sofa", "Sofa Bed", "Sofa Table".`,
          },
        ],
      ],
      [
        2,
        [
          {
            field: 'style',
            code: 'invalid_value',
            message: `style "Victorian" is not one of the FurnitureStyle ${styles}.`,
          },
          {
            field: 'variants[0].color',
            code: 'invalid_value',
            message: `variants[0].color "NAVY" is not one of the ${named(FURNITURE_COLORS.length, 'FurnitureColor')}; closest: "Navy".`,
          },
        ],
      ],
    ],
  );
});
