/** scripts/panorama-views.ts: views of 360° panoramas written as an eval folder, bad label rows refused. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';

import { readManifest } from '../../scripts/lib/manifest.ts';

const script = path.resolve(import.meta.dirname, '../../scripts/panorama-views.ts');
let dir: string;

function run(argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', script, ...argv], (error, stdout, stderr) => {
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'panorama-views-'));
  // A colour panorama, red ahead and blue behind, and a one-channel grey one.
  const width = 360;
  const height = 180;
  const colour = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const column = i % width;
    colour.set(column >= 135 && column < 225 ? [220, 30, 30] : [30, 30, 220], i * 3);
  }
  await sharp(colour, { raw: { width, height, channels: 3 } })
    .png()
    .toFile(path.join(dir, 'room a.png'));
  await sharp(Buffer.alloc(width * height, 90), { raw: { width, height, channels: 1 } })
    .png()
    .toFile(path.join(dir, 'grey.png'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

void test('the listed yaws of each panorama become views and manifest rows', async () => {
  const labels = path.join(dir, 'labels.csv');
  await writeFile(
    labels,
    'panorama,yaws,label,empty_room\nroom a.png,0 180,living_room,yes\n\ngrey.png,90,hallway,\n',
  );
  const out = path.join(dir, 'views');
  const { code, stdout, stderr } = await run([
    '--panoramas',
    dir,
    '--labels',
    labels,
    '--out',
    out,
    '--width',
    '96',
    '--height',
    '64',
  ]);
  assert.equal(code, 0, stderr);
  assert.equal(stdout, `3 views of 2 panorama rows written to ${out}\n`);
  const entries = await readManifest(out);
  assert.deepEqual(
    entries.map(({ file, label, source, emptyRoom }) => ({ file, label, source, emptyRoom })),
    [
      {
        file: 'room a_yaw000.jpg',
        label: 'living_room',
        source: 'room a.png (yaw 0°, 100° hfov)',
        emptyRoom: true,
      },
      {
        file: 'room a_yaw180.jpg',
        label: 'living_room',
        source: 'room a.png (yaw 180°, 100° hfov)',
        emptyRoom: true,
      },
      {
        file: 'grey_yaw090.jpg',
        label: 'hallway',
        source: 'grey.png (yaw 90°, 100° hfov)',
        emptyRoom: undefined,
      },
    ],
  );
  // Each view looks where its yaw says: red ahead, blue behind; the grey panorama reads as grey.
  const centre = async (file: string) => {
    const { data, info } = await sharp(path.join(out, file)).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height, info.channels], [96, 64, 3]);
    return [...data.subarray((32 * 96 + 48) * 3, (32 * 96 + 48) * 3 + 3)];
  };
  const [ahead, behind, grey] = (await Promise.all(entries.map((e) => centre(e.file)))).map(String);
  assert.match(ahead!, /^2[0-3]\d,[0-6]\d,[0-6]\d$/); // red (JPEG rounds a little)
  assert.match(behind!, /^[0-6]\d,[0-6]\d,2[0-3]\d$/); // blue
  assert.match(grey!, /^(8[7-9]|9[0-3]),(8[7-9]|9[0-3]),(8[7-9]|9[0-3])$/); // grey 90 ± 3
});

void test('a label row without its cells, or with a yaw out of range, stops the run before any view', async () => {
  const labels = path.join(dir, 'bad.csv');
  const out = path.join(dir, 'never');
  for (const [rows, message] of [
    ['grey.png,90,hallway\nroom a.png,,bedroom', `${labels} line 3: needs a panorama, yaws and a label`],
    ['grey.png,90,', `${labels} line 2: needs a panorama, yaws and a label`],
    ['grey.png,90 360,hallway', `${labels} line 2: a yaw must be a whole number from 0 to 359, not 360`],
    ['grey.png,ninety,hallway', `${labels} line 2: a yaw must be a whole number from 0 to 359, not ninety`],
    [
      'grey.png,90,hallway\ngrey.jpg,90,hallway',
      `${labels} line 3: ${path.join(dir, 'grey.jpg')} does not exist`,
    ],
  ]) {
    await writeFile(labels, `panorama,yaws,label\n${rows}\n`);
    const { code, stderr } = await run(['--panoramas', dir, '--labels', labels, '--out', out]);
    assert.equal(code, 1);
    assert.ok(stderr.includes(`Error: ${message}\n`), stderr);
    assert.equal(existsSync(out), false);
  }
  await writeFile(labels, 'file,label\nx.jpg,kitchen\n');
  const { stderr } = await run(['--panoramas', dir, '--labels', labels, '--out', out]);
  assert.ok(stderr.includes(`Error: ${labels} needs "panorama", "yaws" and "label" columns\n`), stderr);
});

void test('an option out of range, or one missing, is refused before the labels are read', async () => {
  const labels = path.join(dir, 'no-such-labels.csv');
  const { code, stderr } = await run(['--panoramas', dir, '--labels', labels, '--out', dir, '--hfov', '180']);
  assert.equal(code, 1);
  assert.ok(stderr.includes('Error: --hfov must be a number from 1 to 179, not 180\n'), stderr);
  const missing = await run(['--labels', labels]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^usage: panorama-views\.ts --panoramas <dir> --labels <csv> --out <dir>/);
});
