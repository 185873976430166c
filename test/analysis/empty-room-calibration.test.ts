/**
 * Empty rooms: the furnished/empty decision on detector peaks, the naming rule, and calibration
 * checked on stored probabilities. The stored rows (fixtures/empty-room-calibration.json) are the
 * out-of-fold answers of `scripts/fit-empty-rooms.ts` on held-out training photos with their furniture
 * masked out: the probability the verdict gave each empty room, and whether its room type was right.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';

import {
  answerThreshold,
  expectedCalibrationError,
  type ScoredAnswer,
} from '../../scripts/lib/calibration.ts';
import { COCO_LABELS } from '../../src/analysis/model/coco-labels.ts';
import { furnishingEvidence } from '../../src/analysis/model/furnishing.ts';
import {
  DEFAULT_HEAD_PATH,
  loadRoomHead,
  parseRoomHead,
  type RoomHeadFile,
} from '../../src/analysis/model/room-head.ts';
import { nameInteriorRoom } from '../../src/analysis/model/scene-verdict.ts';

const stored = JSON.parse(
  await readFile(new URL('./fixtures/empty-room-calibration.json', import.meta.url), 'utf8'),
) as { answerAbove: number; rows: [number, 0 | 1][] };
const answers: ScoredAnswer[] = stored.rows.map(([p, right]) => ({ p, right: right === 1 }));

/** Detector peaks with the given classes set, all others 0. */
function peaks(scores: Record<string, number>): Float32Array {
  const classMax = new Float32Array(COCO_LABELS.length);
  for (const [label, score] of Object.entries(scores)) {
    const k = COCO_LABELS.indexOf(label as (typeof COCO_LABELS)[number]);
    assert.ok(k >= 0, label);
    classMax[k] = score;
  }
  return classMax;
}

void test('the shipped head answers empty rooms at the threshold fitted on the stored answers', async () => {
  const head = await loadRoomHead();
  assert.ok(head.emptyRooms, 'the shipped head has an empty-room head');
  assert.equal(head.emptyRooms.answerAbove, Number(stored.answerAbove.toPrecision(4)));
  assert.equal(answerThreshold(answers, 0.9), head.emptyRooms.answerAbove);
});

void test('stored empty-room probabilities are calibrated: right about as often as they say', () => {
  assert.equal(answers.length, 207);
  // Over all probabilities (the main head alone, at its own temperature, was 0.111 on these photos).
  assert.ok(expectedCalibrationError(answers) < 0.08, `ECE ${expectedCalibrationError(answers)}`);
  const answered = answers.filter((a) => a.p >= stored.answerAbove);
  const right = answered.filter((a) => a.right).length;
  const stated = answered.reduce((sum, a) => sum + a.p, 0) / answered.length;
  assert.ok(right / answered.length >= 0.9, `right ${right}/${answered.length}`);
  // What the answers claim on average and how often they are right differ by under 5 points.
  assert.ok(Math.abs(stated - right / answered.length) < 0.05, `stated ${stated}, right ${right}`);
  // And the answers are not a handful: more than 40 % of the empty rooms get a type.
  assert.ok(answered.length / answers.length > 0.4, `answered ${answered.length}/${answers.length}`);
});

void test('calibration error and answer threshold on hand-made answers', () => {
  const sure = Array.from({ length: 20 }, (_, i) => ({ p: 0.95, right: i < 19 }));
  assert.ok(Math.abs(expectedCalibrationError(sure) - 0) < 1e-9);
  const overconfident = Array.from({ length: 10 }, (_, i) => ({ p: 0.9, right: i < 5 }));
  assert.ok(Math.abs(expectedCalibrationError(overconfident) - 0.4) < 1e-9);
  // Ten right answers above 0.8, then wrong ones: the threshold stops where precision would drop.
  const rows = [
    ...Array.from({ length: 10 }, (_, i) => ({ p: 0.99 - i * 0.01, right: true })),
    { p: 0.7, right: false },
    { p: 0.6, right: false },
  ];
  assert.equal(answerThreshold(rows, 0.9), 0.7);
  assert.equal(answerThreshold(rows, 0.95), 0.9);
  // Fewer than ten answers never make a threshold.
  assert.equal(answerThreshold(rows.slice(0, 9), 0.5), 1);
});

void test('furnishing: large furniture seen faintly, or many kinds of furnishing at once', () => {
  assert.equal(furnishingEvidence(peaks({})).furnished, false);
  // A stool scored as a 0.32 dining table (the furnished kitchen of empty-dev).
  assert.equal(furnishingEvidence(peaks({ 'dining table': 0.32 })).furnished, true);
  assert.equal(furnishingEvidence(peaks({ 'dining table': 0.16, bed: 0.14 })).furnished, false);
  // A coffee machine and a bread box on a counter: cups, bowls, a keyboard, a toaster, a clock, a book.
  const counter = {
    cup: 0.18,
    bowl: 0.17,
    chair: 0.14,
    keyboard: 0.13,
    toaster: 0.1,
    clock: 0.29,
    book: 0.11,
  };
  assert.deepEqual(furnishingEvidence(peaks(counter)), {
    largeFurniturePeak: Number(new Float32Array([0.14])[0]),
    furnishingClasses: 7,
    furnished: true,
  });
  // Fixtures are part of the room: an emptied kitchen keeps its oven, fridge and sink.
  assert.equal(
    furnishingEvidence(peaks({ oven: 0.48, refrigerator: 0.47, microwave: 0.47, sink: 0.23, cup: 0.24 }))
      .furnished,
    false,
  );
});

void test('an empty room is named only on its fixtures and a probability above the threshold', async () => {
  const head = await loadRoomHead();
  const above = head.emptyRooms!.answerAbove + 0.05;
  const rooms = (best: string, p: number) => ({
    [best]: p,
    living_room: (1 - p) / 2,
    dining_room: (1 - p) / 2,
  });
  // White walls read as a bathroom: without a toilet or a basin seen it stays unknown.
  assert.equal(nameInteriorRoom(head, rooms('bathroom', 0.95), false, peaks({})).roomType, 'unknown');
  assert.equal(
    nameInteriorRoom(head, rooms('bathroom', 0.95), false, peaks({ toilet: 0.3 })).roomType,
    'bathroom',
  );
  assert.equal(
    nameInteriorRoom(head, rooms('kitchen', above), false, peaks({ oven: 0.25 })).roomType,
    'kitchen',
  );
  // A fixture alone is not enough when the heads are unsure.
  assert.equal(
    nameInteriorRoom(head, rooms('kitchen', 0.5), false, peaks({ oven: 0.5 })).roomType,
    'unknown',
  );
  // Rooms without fixtures need the probability alone.
  assert.equal(nameInteriorRoom(head, rooms('bedroom', above), false, peaks({})).roomType, 'bedroom');
  assert.deepEqual(nameInteriorRoom(head, rooms('bedroom', 0.6), false, peaks({})), {
    roomType: 'unknown',
    p: 0.6,
  });
  // A furnished room keeps the head's own, lower bar.
  assert.equal(nameInteriorRoom(head, rooms('bedroom', 0.6), true, peaks({})).roomType, 'bedroom');
});

void test('a head file whose empty-room part does not fit the main head is refused', async () => {
  const file = JSON.parse(await readFile(DEFAULT_HEAD_PATH, 'utf8')) as RoomHeadFile;
  const empty = file.emptyRooms!;
  assert.equal(parseRoomHead(file).emptyRooms?.labels.length, 6);
  for (const broken of [
    { ...empty, labels: [...empty.labels.slice(0, -1), 'garage'] },
    { ...empty, answerAbove: 1.5 },
    { ...empty, temperature: 0 },
    { ...empty, bias: empty.bias.slice(1) },
  ]) {
    assert.throws(() => parseRoomHead({ ...file, emptyRooms: broken }), {
      message: 'the empty-room part of the room classifier file is malformed',
    });
  }
  // Without the part, empty rooms are read by the main head alone.
  const { emptyRooms: _unused, ...withoutEmpty } = file;
  assert.equal(parseRoomHead(withoutEmpty).emptyRooms, null);
});
