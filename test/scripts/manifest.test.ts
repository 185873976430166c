/** The manifest of a labelled folder, as `npm run train` and `npm run eval` read it. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { pictureLongSide, readManifest } from '../../scripts/lib/manifest.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'manifest-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function manifestOf(text: string) {
  await writeFile(path.join(dir, 'manifest.csv'), text);
  return readManifest(dir);
}

void test('rows are read by header name, quoted cells and blank lines allowed', async () => {
  const entries = await manifestOf(
    'label,file,source\r\nkitchen,a/k 1.jpg,houses\n\n"dining_room","b,""x"".png",\nbedroom, c.webp \n',
  );
  assert.deepEqual(entries, [
    { file: 'a/k 1.jpg', absolutePath: path.join(dir, 'a/k 1.jpg'), label: 'kitchen', source: 'houses' },
    { file: 'b,"x".png', absolutePath: path.join(dir, 'b,"x".png'), label: 'dining_room', source: '' },
    { file: 'c.webp', absolutePath: path.join(dir, 'c.webp'), label: 'bedroom', source: '' },
  ]);
  // Without a source column every source is empty; blank lines before the header are skipped too.
  assert.deepEqual(await manifestOf('\n\nfile,label\nx.jpg,exterior\n'), [
    { file: 'x.jpg', absolutePath: path.join(dir, 'x.jpg'), label: 'exterior', source: '' },
  ]);
});

void test("width and height give the picture's long side as the network is given it", async () => {
  const entries = await manifestOf(
    'file,label,width,height\nsmall.jpg,bedroom,256,256\nwide.jpg,kitchen,1024,682\nodd.jpg,bathroom,,480\n',
  );
  assert.deepEqual(
    entries.map((e) => e.longSide),
    [256, 1024, undefined],
  );
  // decodeForModel shrinks to 512 and never enlarges; without sizes a photo is taken as large.
  assert.deepEqual(entries.map(pictureLongSide), [256, 512, 512]);
});

void test('a folder without a manifest is refused by the path it looked for', async () => {
  const missing = path.join(dir, 'no-such-folder');
  await assert.rejects(readManifest(missing), {
    message: `${path.join(missing, 'manifest.csv')} does not exist: a labelled folder needs one, with columns file,label`,
  });
});

void test('a manifest without its columns, with a short row or with no rows is refused with the line', async () => {
  const manifest = path.join(dir, 'manifest.csv');
  await assert.rejects(manifestOf('path,room\nx.jpg,kitchen\n'), {
    message: `${manifest} needs "file" and "label" columns`,
  });
  await assert.rejects(manifestOf(''), { message: `${manifest} needs "file" and "label" columns` });
  await assert.rejects(manifestOf('file,label\nx.jpg,kitchen\ny.jpg\n'), {
    message: `${manifest} line 3: needs a file and a label`,
  });
  await assert.rejects(manifestOf('file,label\nx.jpg,kitchen\n\n ,bedroom\n'), {
    message: `${manifest} line 4: needs a file and a label`,
  });
  await assert.rejects(manifestOf('file,label\n\n'), { message: `${manifest} lists no photos` });
});
