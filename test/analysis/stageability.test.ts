import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ImageQuality } from '../../src/analysis/image-quality.ts';
import { decideStageability, roomName } from '../../src/analysis/stageability.ts';
import { THRESHOLDS } from '../../src/analysis/thresholds.ts';
import { verdict } from './analysis-helpers.ts';

/** A quality reading that passes every gate by a wide margin (a 3024×4032 phone photo). */
function quality(overrides: Partial<ImageQuality> = {}): ImageQuality {
  const base: ImageQuality = {
    width: 3024,
    height: 4032,
    format: 'jpeg',
    shortSide: 3024,
    aspectRatio: 4032 / 3024,
    sharpness: 600,
    meanBrightness: 130,
    darkClipFraction: 0.01,
    brightClipFraction: 0.02,
  };
  return { ...base, ...overrides };
}

void test('an empty interior room that passes every gate is stageable', () => {
  const decision = decideStageability(quality(), verdict());
  assert.deepEqual(
    { ...decision, confidence: undefined },
    {
      isStageable: true,
      roomType: 'bedroom',
      confidence: undefined,
      details: 'Empty bedroom, 3024×4032, sharp and well lit',
    },
  );
  // Interior 0.98 × stageable share 0.98 × gates near 1.
  assert.ok(decision.confidence > 0.9 && decision.confidence <= 0.99, `confidence ${decision.confidence}`);
});

void test('a furnished room is stageable and says furniture must go', () => {
  const decision = decideStageability(
    quality({ width: 1920, height: 1080, shortSide: 1080, aspectRatio: 1920 / 1080 }),
    verdict({
      roomType: 'living_room',
      roomProbabilities: { living_room: 0.9, dining_room: 0.1 },
      furnished: true,
    }),
  );
  assert.equal(decision.isStageable, true);
  assert.equal(decision.roomType, 'living_room');
  assert.equal(
    decision.details,
    'Furnished living room, 1920×1080, sharp and well lit — staging needs furniture removal',
  );
});

void test('an interior whose room type is unknown may be stageable', () => {
  const decision = decideStageability(
    quality(),
    verdict({
      roomType: 'unknown',
      roomConfidence: 0.4,
      roomProbabilities: { bedroom: 0.4, living_room: 0.35, kitchen: 0.25 },
    }),
  );
  assert.equal(decision.isStageable, true);
  assert.equal(decision.roomType, 'unknown');
  assert.equal(decision.details, 'Empty room (type unclear), 3024×4032, sharp and well lit');
});

void test('an interior of unknown type allows for the corridors among vacant rooms: confidence at most 0.873', () => {
  // The classifier's room mass for a vacant room says little: a vacant corridor read as 2% corridor.
  const rooms = { bedroom: 0.5, living_room: 0.48, corridor: 0.02 };
  const named = decideStageability(quality(), verdict({ roomType: 'bedroom', roomProbabilities: rooms }));
  const unknown = decideStageability(quality(), verdict({ roomType: 'unknown', roomProbabilities: rooms }));
  assert.equal(unknown.isStageable, true);
  assert.equal(THRESHOLDS.unknownRoomUnstageableShare, 0.127);
  // The same picture, its room share 1 − 0.02 replaced by 1 − 0.127.
  const expected = Math.round(((named.confidence * (1 - 0.127)) / (1 - 0.02)) * 1000) / 1000;
  assert.ok(Math.abs(unknown.confidence - expected) <= 0.001, `${unknown.confidence} vs ${expected}`);
  assert.ok(unknown.confidence <= 0.873, `confidence ${unknown.confidence}`);
  assert.ok(named.confidence > 0.94, `named confidence ${named.confidence}`);

  // A model share above the floor is kept: 30% corridor mass says more than the 12.7% prior.
  const corridorish = decideStageability(
    quality(),
    verdict({ roomType: 'unknown', roomProbabilities: { bedroom: 0.7, corridor: 0.3 } }),
  );
  assert.ok(corridorish.confidence < unknown.confidence);
});

void test('exteriors, floor plans and other pictures are never stageable', () => {
  // Each confidence is 1 − P(interior) × P(stageable room 0.98) × P(gates ≈ 0.997).
  const pictures = [
    {
      scene: 'exterior',
      sceneProbabilities: { interior: 0.03, exterior: 0.95, floor_plan: 0.01, other: 0.01 },
      details: 'Exterior photo: only interior rooms can be staged',
      confidence: 0.971,
    },
    {
      scene: 'floor_plan',
      sceneProbabilities: { interior: 0.1, exterior: 0, floor_plan: 0.9, other: 0 },
      details: 'Floor plan, not a photo of a room: only room photos can be staged',
      confidence: 0.902,
    },
    {
      scene: 'other',
      sceneProbabilities: { interior: 0.2, exterior: 0, floor_plan: 0, other: 0.8 },
      details: 'Not a photo of a room: only interior room photos can be staged',
      confidence: 0.805,
    },
  ] as const;
  for (const { scene, sceneProbabilities, details, confidence } of pictures) {
    const decision = decideStageability(quality(), verdict({ roomType: scene, scene, sceneProbabilities }));
    assert.deepEqual(
      {
        isStageable: decision.isStageable,
        roomType: decision.roomType,
        details: decision.details,
        confidence: decision.confidence,
      },
      { isStageable: false, roomType: scene, details, confidence },
    );
  }
});

void test('corridors, staircases and closets are interiors that are not staged', () => {
  for (const room of ['corridor', 'staircase', 'closet'] as const) {
    const decision = decideStageability(
      quality(),
      verdict({ roomType: room, roomProbabilities: { [room]: 0.8, bedroom: 0.2 } }),
    );
    assert.equal(decision.isStageable, false, room);
    assert.equal(decision.roomType, room);
    const name = roomName(room);
    assert.equal(
      decision.details,
      `${name[0]!.toUpperCase()}${name.slice(1)}: ${name}s are not staged, use a photo of a room`,
    );
    // P(stageable) = 0.98 × 0.2 × gates ≈ 0.196: the "not stageable" verdict is right with ≈ 0.8.
    assert.ok(Math.abs(decision.confidence - 0.804) < 0.01, `${room}: ${decision.confidence}`);
  }
});

void test('a person in frame makes a good photo unstageable', () => {
  const decision = decideStageability(quality(), verdict({ personScore: 0.93 }));
  assert.equal(decision.isStageable, false);
  assert.equal(decision.details, 'Person in frame: staging needs a photo without people');
  assert.ok(decision.confidence > 0.99 - 1e-9);
  // A passer-by half out of frame scores low: 0.39 for the one in eval/empty-dev.
  assert.equal(decideStageability(quality(), verdict({ personScore: 0.39 })).isStageable, false);
  const unsure = decideStageability(quality(), verdict({ personScore: 0.32 }));
  assert.equal(unsure.isStageable, true);
  assert.ok(unsure.confidence < 0.7, `a person score near the bar lowers confidence: ${unsure.confidence}`);
});

void test('names the first failing gate and lists the others', () => {
  const decision = decideStageability(
    quality({
      width: 400,
      height: 300,
      shortSide: 300,
      aspectRatio: 4 / 3,
      sharpness: 3,
      meanBrightness: 18,
      darkClipFraction: 0.6,
    }),
    verdict(),
  );
  assert.equal(
    decision.details,
    'Too small: 400×300, the short side must be at least 512 px; also too dark and blurred',
  );
});

void test('confidence grows with the distance from a threshold', () => {
  const nearDark = decideStageability(
    quality({ meanBrightness: THRESHOLDS.minMeanBrightness - 1 }),
    verdict(),
  );
  const veryDark = decideStageability(quality({ meanBrightness: 5 }), verdict());
  assert.equal(nearDark.isStageable, false);
  assert.equal(nearDark.details, 'Too dark: mean brightness 39/255');
  assert.ok(nearDark.confidence < 0.6, `near the bar: ${nearDark.confidence}`);
  assert.ok(veryDark.confidence > 0.98, `far below: ${veryDark.confidence}`);

  const justSharp = decideStageability(quality({ sharpness: THRESHOLDS.minSharpness * 1.05 }), verdict());
  assert.equal(justSharp.isStageable, true);
  assert.ok(justSharp.confidence < 0.6, `just above the sharpness bar: ${justSharp.confidence}`);
});

void test('the model doubting the interior lowers a stageable verdict’s confidence', () => {
  const sure = decideStageability(quality(), verdict());
  const doubtful = decideStageability(
    quality(),
    verdict({ sceneProbabilities: { interior: 0.6, exterior: 0.3, floor_plan: 0.05, other: 0.05 } }),
  );
  assert.equal(doubtful.isStageable, true);
  assert.ok(doubtful.confidence < sure.confidence - 0.3);
});

void test('thresholds are tunable per call', () => {
  const strict = { ...THRESHOLDS, minShortSide: 4000 };
  const decision = decideStageability(quality(), verdict(), strict);
  assert.equal(decision.isStageable, false);
  assert.equal(decision.details, 'Too small: 3024×4032, the short side must be at least 4000 px');
});

void test('room names read as words', () => {
  assert.equal(roomName('living_room'), 'living room');
  assert.equal(roomName('childs_room'), "child's room");
  assert.equal(roomName('home_office'), 'home office');
});

/** What the model says of a picture it takes for a blank page or a document. */
const NOT_A_ROOM = {
  roomType: 'other',
  scene: 'other',
  sceneProbabilities: { interior: 0.05, exterior: 0, floor_plan: 0, other: 0.95 },
} as const;

void test('a picture the model calls other that is too dark is an unknown room, too dark', () => {
  const dark = decideStageability(
    quality({ meanBrightness: 16, darkClipFraction: 0.3 }),
    verdict(NOT_A_ROOM),
  );
  assert.deepEqual(
    { isStageable: dark.isStageable, roomType: dark.roomType, details: dark.details },
    { isStageable: false, roomType: 'unknown', details: 'Too dark: mean brightness 16/255' },
  );
  // A dark photo the model still reads keeps its room type.
  const bedroom = decideStageability(quality({ meanBrightness: 16 }), verdict());
  assert.deepEqual([bedroom.roomType, bedroom.details], ['bedroom', 'Too dark: mean brightness 16/255']);
  // A well-lit picture of no room stays other.
  const page = decideStageability(quality(), verdict(NOT_A_ROOM));
  assert.deepEqual(
    [page.roomType, page.details],
    ['other', 'Not a photo of a room: only interior room photos can be staged'],
  );
});

void test('a picture the model calls other that is overexposed may be either: details say both', () => {
  const decision = decideStageability(
    quality({ meanBrightness: 240, brightClipFraction: 0.7 }),
    verdict(NOT_A_ROOM),
  );
  assert.deepEqual(
    { isStageable: decision.isStageable, roomType: decision.roomType, details: decision.details },
    {
      isStageable: false,
      roomType: 'other',
      details:
        'Overexposed: mean brightness 240/255, or not a photo of a room at all: only interior room photos can be staged',
    },
  );
});

void test('a dark or washed-out exterior is an exterior, also when only its scene or its room type says so', () => {
  // A vision-language provider may call an exterior so in one of the two: the exterior comes first.
  for (const meanBrightness of [16, 240]) {
    for (const [scene, roomType] of [
      ['exterior', 'exterior'],
      ['other', 'exterior'],
      ['exterior', 'other'],
    ] as const) {
      const exterior = decideStageability(quality({ meanBrightness }), verdict({ roomType, scene }));
      assert.deepEqual(
        [exterior.roomType, exterior.details],
        [roomType, 'Exterior photo: only interior rooms can be staged'],
        `${meanBrightness}: ${scene}/${roomType}`,
      );
    }
  }
});

void test('below minModelSide the verdict of the model is not used', () => {
  const plan = verdict({ roomType: 'floor_plan', scene: 'floor_plan' });
  const tiny = decideStageability(
    quality({ width: 31, height: 40, shortSide: 31, aspectRatio: 40 / 31 }),
    plan,
  );
  assert.deepEqual(
    { isStageable: tiny.isStageable, roomType: tiny.roomType, details: tiny.details },
    {
      isStageable: false,
      roomType: 'unknown',
      details: 'Too small: 31×40, the short side must be at least 512 px',
    },
  );
  const small = decideStageability(
    quality({ width: 32, height: 40, shortSide: 32, aspectRatio: 40 / 32 }),
    plan,
  );
  assert.deepEqual(
    [small.roomType, small.details],
    ['floor_plan', 'Floor plan, not a photo of a room: only room photos can be staged'],
  );
  const tuned = decideStageability(quality({ width: 32, height: 40, shortSide: 32 }), plan, {
    ...THRESHOLDS,
    minModelSide: 100,
  });
  assert.equal(tuned.roomType, 'unknown');
});
