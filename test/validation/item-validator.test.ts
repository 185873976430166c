import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createItemValidator } from '../../src/validation/item-validator.ts';
import { isAbsoluteUri } from '../../src/validation/uri-format.ts';
import { childPath, pathFromPointer } from '../../src/validation/field-errors.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';

test('URL checks are linear: a 65,000-character URL ending in a space is judged at once', () => {
  const validate = createItemValidator();
  const url = `https://${'a'.repeat(65_000)} `;
  const started = performance.now();
  const verdict = validate(product({ variants: [variant({ item_url: url })] }));
  const elapsed = performance.now() - started;
  assert.equal(verdict.ok, false);
  assert.deepEqual(verdict.ok ? [] : verdict.errors.map((e) => `${e.code}@${e.field}`), [
    'invalid_format@variants[0].item_url',
  ]);
  // Not a benchmark: a backtracking pattern took seconds here; anything under a second is linear.
  assert.ok(elapsed < 1000, `took ${elapsed.toFixed(0)} ms`);
});

test('the URI check is linear on inputs built to make a pattern backtrack', () => {
  const n = 32_000;
  const inputs = [
    `https://${'a:'.repeat(n)}`,
    `https://${'a'.repeat(2 * n)}:x`,
    `https://${'%41'.repeat(n / 2)}%`,
    `https://x.com/${'%41/'.repeat(n / 2)} `,
    `https://x.com/?${'?'.repeat(2 * n)}#`.concat('#'),
    `a:${'/a'.repeat(n)}<`,
    `https://[${':'.repeat(2 * n)}`,
  ];
  const started = performance.now();
  assert.deepEqual(
    inputs.map((input) => isAbsoluteUri(input)),
    inputs.map(() => false),
  );
  const elapsed = performance.now() - started;
  // Not a benchmark: a backtracking pattern takes seconds on one of these; linear ones take < 10 ms.
  assert.ok(elapsed < 1000, `took ${elapsed.toFixed(0)} ms`);
});

test('isAbsoluteUri accepts absolute URIs with a host and refuses the rest', () => {
  const accepted = [
    'https://x.com',
    'https://x.com/a?b=1#c',
    'ftp://host/file',
    'https://[::1]:8443/p',
    'https://u:p@x.com:8080/a/b;c=d?q=/?#f/?',
    "https://x.com/a%20b/(1)!$&'*+,;=~",
    'https://xn--mbel-7qa.de/',
    'https://1.2.3.4/a',
    'HTTPS://X.COM/',
    // RFC 3986 sets no range on a port, and allows a future IP literal.
    'https://x.com:99999/',
    'https://[::1]:99999/',
    'https://[v1.fe80::a+en1]/',
    // URIs of other schemes are URIs: the schema's pattern refuses them as not https.
    'mailto:a@b.c',
    'urn:isbn:0451450523',
    'data:image/jpeg;base64,/9j/4AAQ',
    'file:///srv/photo.jpg',
  ];
  const refused = [
    'https://',
    'https:foo',
    '//x.com/a',
    'not a url',
    'https://x.com/a b',
    '',
    'https:///path',
    // RFC 3986 has no place for these characters; a browser would escape them, a URI holds them escaped.
    'https://example.com/<x>',
    'https://example.com/a"b',
    'https://example.com\\x',
    'https://example.com/{a}|^`',
    'https://example.com/%zz',
    'https://example.com/%2',
    'https://example.com#frag#frag2',
    // An IRI, not a URI: non-ASCII is percent-encoded in a path and written xn-- in a host.
    'https://x.com/sofá.jpg',
    'https://möbel.de/',
    'https://[::::]/',
    'https://[1.2.3]/',
    // A web URL needs a host.
    'http:///photo.jpg',
    'http:photo.jpg',
    'https://x.com:80a/',
    'https://:80/',
  ];
  assert.deepEqual(
    accepted.filter((url) => !isAbsoluteUri(url)),
    [],
  );
  assert.deepEqual(
    refused.filter((url) => isAbsoluteUri(url)),
    [],
  );
});

test('a URL holding U+0000 is reported once, as invalid_format, beside other unstorable strings', () => {
  // Found by test/property/item-verdict.test.ts: the schema's format check and the check for strings
  // PostgreSQL cannot store both named the url, so one defect was listed twice.
  const validate = createItemValidator();
  const verdict = validate(
    product({ name: 'x\u0000', variants: [variant({ images: [{ url: 'https://a.test/\u0000' }] })] }),
  );
  assert.deepEqual(verdict.ok ? [] : verdict.errors.map((e) => `${e.code}@${e.field}`), [
    'invalid_format@variants[0].images[0].url',
    'invalid_format@name',
  ]);
});

void test('an empty key is a member like any other: paths under it start with "."', () => {
  // Found by the item-verdict property (seed 465900906): the path of the lone surrogate was " ".
  const verdict = createItemValidator()({ '': { '': 0, ' ': '\ud800' } });
  assert.equal(verdict.ok, false);
  assert.ok(!verdict.ok);
  assert.deepEqual(
    verdict.errors.filter((error) => error.code === 'invalid_format').map((error) => error.field),
    ['. '],
  );
  assert.equal(pathFromPointer(''), '');
  assert.equal(pathFromPointer('/'), '');
  assert.equal(pathFromPointer('//x'), '.x');
  assert.equal(pathFromPointer('/variants/0/images/2/angle'), 'variants[0].images[2].angle');
  assert.equal(pathFromPointer('/a~1b/c~0d'), 'a/b.c~d');
  assert.equal(childPath('', 'name'), 'name');
  assert.equal(childPath('/', 'x'), '.x');
  assert.equal(childPath('/variants/1', 'sku'), 'variants[1].sku');
});
