/**
 * Empty rooms: the furnished/empty decision on detector peaks, the naming rule, and calibration
 * checked on stored probabilities. The stored rows (fixtures/empty-room-calibration.json) are the
 * out-of-fold answers of `scripts/fit-empty-rooms.ts` on held-out training photos with their furniture
 * masked out: the probability of the best room the verdict gave each empty room, whether that room was
 * right, and the room it named ('' where the fixture rule left it `unknown`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';

import {
  answerThreshold,
  answerThresholdsByRoom,
  expectedCalibrationError,
  type NamedAnswer,
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
) as { answerAbove: number; answerAboveByRoom: Record<string, number>; rows: [number, 0 | 1, string][] };
const answers: NamedAnswer[] = stored.rows.map(([p, right, room]) => ({ p, right: right === 1, room }));
const named = answers.filter((a) => a.room !== '');
const round = (v: number): number => Number(v.toPrecision(4));

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

void test('the shipped head answers empty rooms at the thresholds fitted on the stored answers', async () => {
  const head = await loadRoomHead();
  assert.ok(head.emptyRooms, 'the shipped head has an empty-room head');
  assert.equal(head.emptyRooms.answerAbove, round(stored.answerAbove));
  assert.equal(answerThreshold(named, 0.9), head.emptyRooms.answerAbove);
  const byRoom = answerThresholdsByRoom(named, head.emptyRooms.labels, 0.9, head.unknownBelow);
  assert.deepEqual(
    Object.fromEntries(Object.entries(byRoom).map(([room, t]) => [room, round(t)])),
    head.emptyRooms.answerAboveByRoom,
  );
  // What the fit chose, spelled out: a bathroom with its fixture seen at the floor (the furnished
  // rooms' `unknownBelow`), living and dining rooms never named when empty.
  assert.deepEqual(head.emptyRooms.answerAboveByRoom, {
    bathroom: 0.35,
    bedroom: 0.5839,
    dining_room: 1,
    entrance_hall: 0.6255,
    kitchen: 0.5827,
    living_room: 1,
  });
});

void test('stored empty-room probabilities are calibrated: right about as often as they say', () => {
  assert.equal(answers.length, 207);
  assert.equal(named.length, 194);
  // Over all probabilities of the best room.
  assert.ok(expectedCalibrationError(answers) < 0.08, `ECE ${expectedCalibrationError(answers)}`);
  const answered = named.filter((a) => a.p >= round(stored.answerAboveByRoom[a.room]!));
  const right = answered.filter((a) => a.right).length;
  const stated = answered.reduce((sum, a) => sum + a.p, 0) / answered.length;
  assert.deepEqual([answered.length, right], [152, 145]);
  // Every room's own answers are right in at least 90 % of cases, not only all of them together.
  for (const room of Object.keys(stored.answerAboveByRoom)) {
    const own = answered.filter((a) => a.room === room);
    const ownRight = own.filter((a) => a.right).length;
    assert.ok(own.length === 0 || ownRight / own.length >= 0.9, `${room}: right ${ownRight}/${own.length}`);
  }
  // The answers claim no more than they are right (they are right more often than they say here:
  // a bathroom with its toilet seen is answered from 0.35 on).
  assert.ok(stated <= right / answered.length + 0.01, `stated ${stated}, right ${right}/${answered.length}`);
  // And the answers are not a handful: more than 40 % of the empty rooms get a type.
  assert.ok(answered.length / answers.length > 0.4, `answered ${answered.length}/${answers.length}`);
});

void test('calibration error and answer thresholds on hand-made answers', () => {
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
  // Per room: easy bathrooms (all right down to 0.2) do not lend their precision to the halls.
  const bathrooms = Array.from({ length: 12 }, (_, i) => ({
    p: (90 - i * 6) / 100,
    right: true,
    room: 'bathroom',
  }));
  const halls = rows.map((row) => ({ ...row, room: 'entrance_hall' }));
  const livingRooms = [{ p: 0.95, right: true, room: 'living_room' }];
  const mixed = [...bathrooms, ...halls, ...livingRooms, { p: 0.99, right: false, room: '' }];
  assert.equal(
    answerThreshold(
      mixed.filter((a) => a.room !== ''),
      0.9,
    ),
    0.6,
  );
  assert.deepEqual(answerThresholdsByRoom(mixed, ['bathroom', 'entrance_hall', 'living_room'], 0.9, 0.35), {
    bathroom: 0.35,
    entrance_hall: 0.7,
    living_room: 1,
  });
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

void test("an empty room is named only on its fixtures and its own room's threshold", async () => {
  const head = await loadRoomHead();
  const threshold = head.emptyRooms!.answerAboveByRoom;
  const rooms = (best: string, p: number) => ({
    [best]: p,
    living_room: (1 - p) / 2,
    dining_room: (1 - p) / 2,
  });
  // White walls read as a bathroom: without a toilet or a basin seen it stays unknown.
  assert.equal(nameInteriorRoom(head, rooms('bathroom', 0.95), false, peaks({})).roomType, 'unknown');
  // With the toilet seen, a bathroom needs only the bar of a furnished room.
  assert.deepEqual(nameInteriorRoom(head, rooms('bathroom', 0.4), false, peaks({ toilet: 0.3 })), {
    roomType: 'bathroom',
    p: 0.4,
  });
  assert.equal(
    nameInteriorRoom(head, rooms('bathroom', 0.34), false, peaks({ toilet: 0.3 })).roomType,
    'unknown',
  );
  assert.equal(
    nameInteriorRoom(head, rooms('kitchen', threshold.kitchen!), false, peaks({ oven: 0.25 })).roomType,
    'kitchen',
  );
  // A fixture alone is not enough when the heads are unsure.
  assert.equal(
    nameInteriorRoom(head, rooms('kitchen', 0.5), false, peaks({ oven: 0.5 })).roomType,
    'unknown',
  );
  // Rooms without fixtures need the probability alone, each its own.
  assert.equal(nameInteriorRoom(head, rooms('bedroom', 0.59), false, peaks({})).roomType, 'bedroom');
  assert.deepEqual(nameInteriorRoom(head, rooms('bedroom', 0.58), false, peaks({})), {
    roomType: 'unknown',
    p: 0.58,
  });
  assert.equal(nameInteriorRoom(head, rooms('entrance_hall', 0.6), false, peaks({})).roomType, 'unknown');
  // An empty living room is never named: its answers were not right often enough to trust.
  assert.equal(nameInteriorRoom(head, { living_room: 0.97 }, false, peaks({})).roomType, 'unknown');
  // Not even at a probability that rounded to exactly 1: a threshold of 1 means never.
  assert.equal(threshold.living_room, 1);
  assert.equal(nameInteriorRoom(head, { living_room: 1 }, false, peaks({})).roomType, 'unknown');
  // A furnished room keeps the head's own, lower bar.
  assert.equal(nameInteriorRoom(head, rooms('bedroom', 0.58), true, peaks({})).roomType, 'bedroom');
});

void test('a head file whose empty-room part does not fit the main head is refused', async () => {
  const file = JSON.parse(await readFile(DEFAULT_HEAD_PATH, 'utf8')) as RoomHeadFile;
  const empty = file.emptyRooms!;
  assert.equal(parseRoomHead(file).emptyRooms?.labels.length, 6);
  // A file is JSON from disk: its parts are checked, whatever the type says they hold.
  for (const broken of [
    { ...empty, labels: [...empty.labels.slice(0, -1), 'garage'] },
    { ...empty, answerAbove: 1.5 },
    { ...empty, answerAboveByRoom: { ...empty.answerAboveByRoom, garage: 0.5 } },
    { ...empty, answerAboveByRoom: { bedroom: -0.1 } },
    // Values that are not numbers, and a part that is not an object of them, are refused too.
    { ...empty, answerAboveByRoom: { bedroom: null } },
    { ...empty, answerAboveByRoom: { bedroom: '0.5' } },
    { ...empty, answerAboveByRoom: { bedroom: true } },
    { ...empty, answerAboveByRoom: 5 },
    { ...empty, answerAboveByRoom: [0.5] },
    { ...empty, answerAbove: null },
    { ...empty, temperature: 0 },
    { ...empty, bias: empty.bias.slice(1) },
  ] as unknown[]) {
    assert.throws(() => parseRoomHead({ ...file, emptyRooms: broken as typeof empty }), {
      message: 'the empty-room part of the room classifier file is malformed',
    });
  }
  // Without thresholds per room, every room has the one `answerAbove`.
  const { answerAboveByRoom: _none, ...pooled } = empty;
  assert.equal(
    parseRoomHead({ ...file, emptyRooms: pooled }).emptyRooms?.answerAboveByRoom.living_room,
    0.4873,
  );
  // Without the part, empty rooms are read by the main head alone.
  const { emptyRooms: _unused, ...withoutEmpty } = file;
  assert.equal(parseRoomHead(withoutEmpty).emptyRooms, null);
});
