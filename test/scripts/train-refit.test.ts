/**
 * `npm run train -- --data <dir>` on a user's own folder, end to end: features extracted by the real
 * network, a head fitted and written where `--out` says, and that head loaded by the analyzer. The
 * folder holds 5 listing photos of each of four rooms from ../shared/train (linked, not copied) and 5
 * plans drawn in code. Skipped, with the reason, where those photos are not there.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

import { createSceneClassifier, decodeForModel } from '../../src/analysis/model/index.ts';
import { DEFAULT_HEAD_PATH, type RoomHeadFile } from '../../src/analysis/model/room-head.ts';
import { drawSyntheticFloorPlan } from '../../scripts/lib/synthetic-floor-plan.ts';

const TRAIN = fileURLToPath(new URL('../../../shared/train/', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../../scripts/train-room-classifier.ts', import.meta.url));
const ROOMS = ['bathroom', 'bedroom', 'exterior', 'kitchen'];
const PER_LABEL = 5;

const skip = existsSync(`${TRAIN}manifest.csv`) ? false : `no photos: ${TRAIN} is absent`;

let dir: string;
let pictures: Array<{ file: string; label: string }>;

/** Runs the training script on the test folder with `args`; resolves with its exit code and output. */
function train(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const argv = ['--import', 'tsx', SCRIPT, '--data', path.join(dir, 'photos')];
  argv.push('--cache', path.join(dir, 'cache'), '--threads', '1', ...args);
  return new Promise((resolve) => {
    execFile(process.execPath, argv, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

async function readHead(file: string): Promise<RoomHeadFile> {
  return JSON.parse(await readFile(file, 'utf8')) as RoomHeadFile;
}

const committedHead = async (): Promise<string> =>
  createHash('sha256')
    .update(await readFile(DEFAULT_HEAD_PATH))
    .digest('hex');

before(async () => {
  if (skip) return;
  dir = await mkdtemp(path.join(tmpdir(), 'train-refit-'));
  const photos = path.join(dir, 'photos');
  // The first listing photos of each room in ../shared/train's manifest (file,label,source,…).
  const rows = (await readFile(`${TRAIN}manifest.csv`, 'utf8')).split('\n').map((l) => l.split(','));
  pictures = [];
  for (const room of ROOMS) {
    const files = rows.filter(([, label, source]) => label === room && source === 'houses-dataset');
    await mkdir(path.join(photos, room), { recursive: true });
    for (const [file] of files.slice(0, PER_LABEL)) {
      const name = path.join(room, path.basename(file!));
      await symlink(path.join(TRAIN, file!), path.join(photos, name));
      pictures.push({ file: name, label: room });
    }
  }
  await mkdir(path.join(photos, 'floor_plan'));
  for (let i = 0; i < PER_LABEL; i++) {
    const name = path.join('floor_plan', `plan-${i}.jpg`);
    await writeFile(path.join(photos, name), await drawSyntheticFloorPlan(i + 1));
    pictures.push({ file: name, label: 'floor_plan' });
  }
  const sourceOf = (label: string) => (label === 'floor_plan' ? 'drawn' : 'houses-dataset');
  const manifest = pictures.map((p) => `${p.file},${p.label},${sourceOf(p.label)}`);
  await writeFile(path.join(photos, 'manifest.csv'), ['file,label,source', ...manifest, ''].join('\n'));
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

void test(
  'a refit on a folder of its own writes a head that the analyzer loads and that knows its photos',
  { skip },
  async () => {
    const committed = await committedHead();
    const out = path.join(dir, 'head.json');
    const result = await train(['--out', out]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^features: 0 cached, 25 to extract$/m);
    assert.match(result.stdout, /^fit: 20 photos × 2668 features, accuracy 100\.0%$/m);
    assert.match(result.stdout, /^calibration: 5 photos, accuracy 100\.0%, temperature /m);
    assert.match(result.stdout, /^calibration split through the full verdict: 100\.0%$/m);

    const head = await readHead(out);
    assert.deepEqual(head.labels, ['bathroom', 'bedroom', 'exterior', 'floor_plan', 'kitchen']);
    assert.equal(head.dimensions, 2668);
    assert.equal(head.weights.length, 5);
    assert.deepEqual(head.provenance.countsPerLabel, {
      bathroom: 5,
      bedroom: 5,
      exterior: 5,
      floor_plan: 5,
      kitchen: 5,
    });
    assert.deepEqual(head.provenance.sources, { 'houses-dataset': 20, drawn: 5 });
    assert.deepEqual(head.provenance.hyperParameters, {
      l2: 0.1,
      epochs: 400,
      learningRate: 0.01,
      calibrationFraction: 0.15,
    });
    assert.equal(head.provenance.seed, 20240611);
    assert.equal(head.provenance.trainingAccuracy, 1);
    assert.equal(head.provenance.calibrationAccuracy, 1);
    assert.equal(head.provenance.calibrationVerdictAccuracy, 1);
    // The committed head is left alone when --out names another file.
    assert.equal(await committedHead(), committed);

    const classifier = createSceneClassifier({ threads: 1, headPath: out });
    try {
      await classifier.ready();
      for (const picture of pictures) {
        const image = await decodeForModel(await readFile(path.join(dir, 'photos', picture.file)));
        const verdict = await classifier.classify(image);
        assert.equal(verdict.roomType, picture.label, picture.file);
        // The refit's five classes (and the drawing rule's `other`), not the committed head's eight.
        assert.deepEqual(Object.keys(verdict.roomProbabilities), [...head.labels, 'other'], picture.file);
      }
    } finally {
      await classifier.close();
    }
  },
);

void test(
  '--calibration 0 fits on every photo, keeps temperature 1 and reports no calibration figures',
  { skip },
  async () => {
    const out = path.join(dir, 'uncalibrated.json');
    const result = await train(['--out', out, '--calibration', '0']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^fit: 25 photos × 2668 features, accuracy 100\.0%$/m);
    assert.match(result.stdout, /^calibration: no photos held out, temperature 1\.000$/m);
    assert.doesNotMatch(result.stdout, /calibration split through the full verdict/);

    const head = await readHead(out);
    assert.equal(head.temperature, 1);
    assert.equal(head.provenance.trainingAccuracy, 1);
    for (const absent of ['calibrationAccuracy', 'calibrationNll', 'calibrationVerdictAccuracy']) {
      assert.equal(absent in head.provenance, false, absent);
    }
  },
);
