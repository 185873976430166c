/**
 * How a vacant room is told and named, on stored detector outputs and hand-made ones. The stored rows
 * (fixtures/empty-room-detections.json) are the real model's per-class peak scores (≥ 0.05) and the
 * scene classifier's interior probabilities for the 14 photos of ../shared/eval/empty-dev, seven of
 * ../shared/eval/rooms-dev (the two vacant bedrooms, listing bathrooms and a kitchen without furniture)
 * and three listing bathrooms of ../shared/train whose tub, vanity or towel shelf the detector scores as
 * faint furniture: numbers derived from the photos, not the photos.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';

import { COCO_LABELS } from '../../src/analysis/model/coco-labels.ts';
import { EMPTY_ROOM_EVIDENCE, nameEmptyRoom } from '../../src/analysis/model/empty-room-evidence.ts';
import { furnishingEvidence } from '../../src/analysis/model/furnishing.ts';
import { NETWORK_INPUT_SIZE } from '../../src/analysis/model/network-input.ts';
import { loadRoomHead } from '../../src/analysis/model/room-head.ts';
import { EMPTY_ROOM_MIN_LONG_SIDE, nameInteriorRoom } from '../../src/analysis/model/scene-verdict.ts';

interface StoredRow {
  photo: string;
  label: string;
  emptyRoom: boolean | null;
  rooms: Record<string, number>;
  peaks: Record<string, number>;
  expected: { furnished: boolean; roomType: string | null; reason: string | null };
}
const { rows } = JSON.parse(
  await readFile(new URL('./fixtures/empty-room-detections.json', import.meta.url), 'utf8'),
) as { rows: StoredRow[] };

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

/** Interior probabilities with `best` at `p` and the rest shared by the other five rooms. */
function rooms(best: string, p: number): Record<string, number> {
  const others = ['bathroom', 'bedroom', 'dining_room', 'entrance_hall', 'kitchen', 'living_room'];
  return Object.fromEntries(others.map((room) => [room, room === best ? p : (1 - p) / 5]));
}

void test('stored outputs: each photo is furnished or vacant, and named, exactly as recorded', () => {
  assert.equal(rows.length, 24);
  for (const row of rows) {
    const classMax = peaks(row.peaks);
    const { furnished } = furnishingEvidence(classMax);
    assert.equal(furnished, row.expected.furnished, `${row.photo}: furnished`);
    if (furnished) continue;
    const named = nameEmptyRoom(row.rooms, classMax);
    assert.deepEqual(named, { roomType: row.expected.roomType, reason: row.expected.reason }, row.photo);
  }
});

void test('stored outputs: the empty-dev pairs keep their furnished flag, and no vacant room is named wrong', () => {
  const pairs = rows.filter((row) => row.photo.startsWith('eval/empty-dev/'));
  assert.equal(pairs.length, 14);
  for (const row of pairs) {
    assert.equal(furnishingEvidence(peaks(row.peaks)).furnished, !row.emptyRoom, row.photo);
  }
  for (const row of rows.filter((r) => !r.expected.furnished)) {
    const { roomType } = nameEmptyRoom(row.rooms, peaks(row.peaks));
    assert.ok(
      roomType === 'unknown' || roomType === row.label,
      `${row.photo}: a ${row.label} named ${roomType}`,
    );
  }
  // What is named, and on what: the emptied kitchens on their appliances; the bedrooms and the
  // living room (an open-plan one whose kitchen shows at the back) not at all.
  const named = (photo: string) => rows.find((row) => row.photo.includes(photo))!.expected;
  assert.deepEqual(named('15c706cb_skybox3_defurnished'), {
    furnished: false,
    roomType: 'kitchen',
    reason: 'appliance',
  });
  assert.equal(named('0b7b0f37_skybox2_defurnished').roomType, 'unknown');
  assert.equal(named('aihs_IMG_0722').roomType, 'unknown');
});

void test('a basin alone names no bathroom: kitchens have sinks', () => {
  // The classifier leaning to a bathroom is not enough with only a basin seen...
  assert.deepEqual(nameEmptyRoom(rooms('bathroom', 0.85), peaks({ sink: 0.6 })), {
    roomType: 'unknown',
    reason: null,
  });
  // ...nor a certain classifier when a kitchen appliance is in view.
  assert.equal(nameEmptyRoom(rooms('bathroom', 0.95), peaks({ sink: 0.6, oven: 0.3 })).roomType, 'unknown');
  // A faint basin is no basin.
  assert.equal(nameEmptyRoom(rooms('bathroom', 0.99), peaks({ sink: 0.34 })).roomType, 'unknown');
  // With the classifier certain and no appliance, the basin is a vanity's.
  assert.deepEqual(nameEmptyRoom(rooms('bathroom', 0.95), peaks({ sink: 0.5 })), {
    roomType: 'bathroom',
    reason: 'sink',
  });
  // A toilet is a bathroom's own, at a clear score.
  assert.deepEqual(nameEmptyRoom(rooms('bathroom', 0.5), peaks({ toilet: 0.3 })), {
    roomType: 'bathroom',
    reason: 'toilet',
  });
  assert.equal(nameEmptyRoom(rooms('bathroom', 0.5), peaks({ toilet: 0.29 })).roomType, 'unknown');
});

void test('a kitchen is never named a bathroom, nor a room without its fixtures anything', () => {
  // White walls read as tiles: however sure the classifier is, no fixture, no name.
  for (const room of ['bathroom', 'bedroom', 'entrance_hall', 'living_room', 'dining_room', 'kitchen']) {
    assert.equal(nameEmptyRoom(rooms(room, 0.99), peaks({})).roomType, 'unknown', room);
  }
  // A kitchen's appliances with the classifier reading a bathroom: not a bathroom (no toilet), not a
  // kitchen (the classifier does not put it first).
  assert.equal(
    nameEmptyRoom(rooms('bathroom', 0.6), peaks({ oven: 0.5, refrigerator: 0.5, sink: 0.4 })).roomType,
    'unknown',
  );
  // A toilet seen through a door while the classifier reads a hall: not named.
  assert.equal(nameEmptyRoom(rooms('entrance_hall', 0.7), peaks({ toilet: 0.5 })).roomType, 'unknown');
  // An open-plan living room showing its kitchen at the back: the classifier is not sure of a kitchen.
  assert.equal(
    nameEmptyRoom(rooms('kitchen', 0.57), peaks({ oven: 0.44, refrigerator: 0.44 })).roomType,
    'unknown',
  );
  assert.deepEqual(nameEmptyRoom(rooms('kitchen', 0.7), peaks({ oven: 0.36 })), {
    roomType: 'kitchen',
    reason: 'appliance',
  });
  // A sink with cabinets and a counter, which only the classifier sees: kitchen when it is certain.
  assert.equal(nameEmptyRoom(rooms('kitchen', 0.89), peaks({ sink: 0.5 })).roomType, 'unknown');
  assert.equal(nameEmptyRoom(rooms('kitchen', 0.9), peaks({ sink: 0.5 })).roomType, 'kitchen');
  assert.equal(EMPTY_ROOM_EVIDENCE.sinkRoomMin, 0.9);
});

void test('fixtures are not furniture; movable furniture seen with confidence is', () => {
  const none = { furniturePeak: 0, faintSeatsAndBeds: 0, furnishingClasses: 0, furnished: false };
  assert.deepEqual(furnishingEvidence(peaks({})), none);
  // An emptied kitchen keeps its oven, fridge, microwave and sink; a bathroom its toilet; ceiling
  // lights, thermostats and range hoods read as clocks and screens.
  const fixtures = {
    oven: 0.48,
    refrigerator: 0.47,
    microwave: 0.47,
    sink: 0.5,
    toilet: 0.6,
    clock: 0.31,
    tv: 0.4,
  };
  assert.deepEqual(furnishingEvidence(peaks(fixtures)), none);
  // A tub scored as a faint bed, a vanity or an island as a faint chair or table: not furnished.
  assert.equal(furnishingEvidence(peaks({ bed: 0.26, couch: 0.11 })).furnished, false);
  assert.equal(furnishingEvidence(peaks({ chair: 0.29 })).furnished, false);
  assert.equal(furnishingEvidence(peaks({ 'dining table': 0.25, bench: 0.2 })).furnished, false);
  // One piece seen clearly (a stool scored as a 0.32 table), or a wardrobe and an armchair at once.
  assert.equal(furnishingEvidence(peaks({ 'dining table': 0.3 })).furnished, true);
  assert.deepEqual(furnishingEvidence(peaks({ chair: 0.24, couch: 0.18 })), {
    furniturePeak: Number(new Float32Array([0.24])[0]),
    faintSeatsAndBeds: 2,
    furnishingClasses: 2,
    furnished: true,
  });
  // A coffee machine and a bread box: cups, bowls, a keyboard, a mouse, a book, a toaster, a chair.
  const counter = {
    cup: 0.18,
    bowl: 0.17,
    chair: 0.14,
    keyboard: 0.13,
    mouse: 0.11,
    book: 0.11,
    toaster: 0.1,
  };
  assert.equal(furnishingEvidence(peaks(counter)).furnishingClasses, 7);
  assert.equal(furnishingEvidence(peaks(counter)).furnished, true);
  const { toaster: _, mouse: __, ...fewer } = counter;
  assert.equal(furnishingEvidence(peaks(fewer)).furnished, false);
});

void test('a picture too small for the detector to vouch for a vacant room is named as before', async () => {
  const head = await loadRoomHead();
  assert.equal(EMPTY_ROOM_MIN_LONG_SIDE, NETWORK_INPUT_SIZE);
  // Without furniture seen, a bathroom or kitchen still needs one of its fixtures...
  assert.equal(nameInteriorRoom(head, rooms('bathroom', 0.95), false, peaks({})).roomType, 'unknown');
  assert.deepEqual(nameInteriorRoom(head, rooms('bathroom', 0.5), false, peaks({ sink: 0.2 })), {
    roomType: 'bathroom',
    p: 0.5,
  });
  // ...and any room the classifier's own bar.
  assert.equal(nameInteriorRoom(head, rooms('bedroom', 0.6), false, peaks({})).roomType, 'bedroom');
  assert.equal(
    nameInteriorRoom(head, rooms('bedroom', head.unknownBelow - 0.01), false, peaks({})).roomType,
    'unknown',
  );
  // A furnished room needs no fixture.
  assert.equal(nameInteriorRoom(head, rooms('bathroom', 0.5), true, peaks({})).roomType, 'bathroom');
});
