/**
 * Renders perspective views of 360° equirectangular panoramas into an eval folder (photos and
 * manifest.csv), so the analyzer can be measured on 360° captures of rooms:
 *
 *   node --import tsx scripts/panorama-views.ts --panoramas <dir> --labels <csv> --out <dir>
 *        [--hfov 100] [--width 1024] [--height 768]
 *
 * <csv>: `panorama,yaws,label[,empty_room]`, a row per panorama and label: the panorama's file in
 * <dir>, the yaws in whole degrees to render (space-separated; 0 looks at the panorama's centre
 * column, 90 a quarter turn right), the manifest label (as in ../shared/eval/README.md) and the
 * manifest's `empty_room`. A panorama or a yaw not listed is not rendered. Views are written as
 * `<panorama>_yaw<deg>.jpg` (JPEG, quality 90) and listed in `<out>/manifest.csv`; then
 * `npm run eval -- <out>`. Only use panoramas whose terms allow it (docs/analyzer-model.md).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';

import { csvCell, readCsv } from './lib/csv.ts';
import { decimalNumber, wholeNumber } from './lib/number-option.ts';
import { perspectiveView } from './lib/panorama-view.ts';

const usage =
  'usage: panorama-views.ts --panoramas <dir> --labels <csv> --out <dir> [--hfov 100] [--width 1024] [--height 768]';
const { values: args } = parseArgs({
  options: {
    panoramas: { type: 'string' },
    labels: { type: 'string' },
    out: { type: 'string' },
    hfov: { type: 'string', default: '100' },
    width: { type: 'string', default: '1024' },
    height: { type: 'string', default: '768' },
  },
});
if (!args.panoramas || !args.labels || !args.out) {
  console.error(usage);
  process.exit(2);
}
const labelsFile = args.labels;
const panoramas = args.panoramas;
const hfov = decimalNumber('--hfov', args.hfov, 1, 179);
const width = wholeNumber('--width', args.width, 64, 4096);
const height = wholeNumber('--height', args.height, 64, 4096);

// Every row is checked before the first panorama is read: a typo on the last row should not cost
// the minutes the others take.
const rows = readCsv(await readFile(labelsFile, 'utf8'), labelsFile, ['panorama', 'yaws', 'label']).map(
  ({ line, cells }) => {
    const { panorama = '', yaws = '', label = '', empty_room: emptyRoom = '' } = cells;
    const yawList = yaws.split(' ').filter((yaw) => yaw !== '');
    if (panorama === '' || yawList.length === 0 || label === '') {
      throw new Error(`${labelsFile} line ${line}: needs a panorama, yaws and a label`);
    }
    const yawDegrees = yawList.map((yaw) => wholeNumber(`${labelsFile} line ${line}: a yaw`, yaw, 0, 359));
    const file = path.join(panoramas, panorama);
    if (!existsSync(file)) throw new Error(`${labelsFile} line ${line}: ${file} does not exist`);
    return { file, panorama, yawDegrees, label, emptyRoom };
  },
);

await mkdir(args.out, { recursive: true });
const manifest = ['file,label,source,empty_room'];
for (const row of rows) {
  // sRGB, three channels: a grey or CMYK panorama is converted rather than misread.
  const { data, info } = await sharp(row.file)
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const panorama = { data, width: info.width, height: info.height };
  for (const yawDegrees of row.yawDegrees) {
    const view = perspectiveView(panorama, { yawDegrees, hfovDegrees: hfov, width, height });
    const file = `${path.parse(row.panorama).name}_yaw${String(yawDegrees).padStart(3, '0')}.jpg`;
    await sharp(view.data, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 90 })
      .toFile(path.join(args.out, file));
    const source = `${row.panorama} (yaw ${yawDegrees}°, ${hfov}° hfov)`;
    manifest.push([file, row.label, source, row.emptyRoom].map(csvCell).join(','));
  }
}
await writeFile(path.join(args.out, 'manifest.csv'), `${manifest.join('\n')}\n`);
console.log(`${manifest.length - 1} views of ${rows.length} panorama rows written to ${args.out}`);
