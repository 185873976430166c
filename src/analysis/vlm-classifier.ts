import sharp from 'sharp';
import { request } from 'undici';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { VlmConfig } from './analysis-config.ts';
import {
  ROOM_TYPE_VALUES,
  SCENE_KINDS,
  type RawImage,
  type RoomType,
  type SceneClassifier,
  type SceneKind,
  type SceneVerdict,
} from './scene-types.ts';

/** The endpoint answered, but not with a usable verdict (or not at all). */
export class VlmError extends Error {}

const ROOMS: ReadonlySet<string> = new Set<string>(ROOM_TYPE_VALUES);
const MAX_ANSWER_BYTES = 1024 * 1024;

/** What the model is asked to answer; numbers are clamped to 0–1 after validation. */
const VlmAnswer = Type.Object({
  scene: Type.Union(SCENE_KINDS.map((scene) => Type.Literal(scene))),
  roomType: Type.String(),
  confidence: Type.Optional(Type.Number()),
  sceneConfidence: Type.Optional(Type.Number()),
  personInFrame: Type.Optional(Type.Boolean()),
  furnished: Type.Optional(Type.Boolean()),
});
type VlmAnswer = Static<typeof VlmAnswer>;

const PROMPT = [
  'You judge real-estate photos for virtual staging. Answer with one JSON object only, no prose:',
  '{"scene": "interior" | "exterior" | "floor_plan" | "other",',
  ` "roomType": one of ${ROOM_TYPE_VALUES.map((r) => `"${r}"`).join(', ')},`,
  ' "confidence": probability 0..1 that roomType is right, "sceneConfidence": probability 0..1 that scene is right,',
  ' "personInFrame": true | false, "furnished": true | false}.',
  'Name an empty room too, from what stays when a room is emptied: its size and shape, windows, doors,',
  ' floor, lighting and fixtures. Use "unknown" only for an interior whose room type cannot be told.',
  '"furnished" is true only for movable furniture (beds, sofas, chairs, tables, wardrobes, rugs, lamps);',
  ' cabinets, counters, sinks, toilets, tubs, built-in appliances and ceiling lights are not furniture.',
].join('\n');

const clamp01 = (value: number | undefined, fallback: number): number =>
  value === undefined || !Number.isFinite(value) ? fallback : Math.min(1, Math.max(0, value));

/** Turns a validated answer into the model's verdict shape, clamping every number to 0–1. */
export function verdictFromAnswer(answer: VlmAnswer, inferenceMs: number): SceneVerdict {
  const roomType: RoomType = ROOMS.has(answer.roomType) ? (answer.roomType as RoomType) : 'unknown';
  const roomConfidence = clamp01(answer.confidence, 0.7);
  const sceneConfidence = clamp01(answer.sceneConfidence, 0.9);
  const sceneProbabilities = Object.fromEntries(
    SCENE_KINDS.map((scene) => [scene, scene === answer.scene ? sceneConfidence : (1 - sceneConfidence) / 3]),
  ) as Record<SceneKind, number>;
  return {
    roomType,
    roomConfidence,
    roomProbabilities: roomType === 'unknown' ? {} : { [roomType]: roomConfidence },
    scene: answer.scene,
    sceneProbabilities,
    // A yes/no answer is no detector score: mapped far from the person threshold on either side.
    personScore: answer.personInFrame ? 0.9 : 0.05,
    objects: [],
    furnished: answer.furnished ?? false,
    inferenceMs,
  };
}

/** Pulls the JSON object out of a chat answer (models sometimes wrap it in a ``` fence or prose). */
export function parseAnswer(content: string): VlmAnswer {
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start === -1 || end <= start) throw new VlmError('the answer holds no JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.slice(start, end + 1));
  } catch {
    throw new VlmError('the answer is not valid JSON');
  }
  if (!Value.Check(VlmAnswer, parsed)) throw new VlmError('the answer does not have the verdict shape');
  return parsed;
}

function contentOf(completion: unknown): string {
  const message = (completion as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]
    ?.message;
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '',
      )
      .join('');
  }
  throw new VlmError('the completion has no message content');
}

/** Where chat completions are posted: the URL as given when it names the path, else `<url>/chat/completions`. */
export function completionsUrl(base: string): string {
  return /\/chat\/completions\/?$/.test(base) ? base : `${base.replace(/\/+$/, '')}/chat/completions`;
}

/**
 * Creates a {@link SceneClassifier} backed by an OpenAI-compatible chat-completions endpoint that
 * sees the picture (as a JPEG data URL, so the endpoint never fetches anything itself). With a
 * `fallback`, any failure of the endpoint (down, slow, nonsense) is answered by the local model.
 */
export function createVlmClassifier(
  config: VlmConfig,
  options: { fallback?: SceneClassifier; onError?: (error: unknown) => void } = {},
): SceneClassifier {
  const { fallback, onError } = options;
  const endpoint = completionsUrl(config.url);

  const ask = async (image: RawImage): Promise<SceneVerdict> => {
    const started = performance.now();
    const jpeg = await sharp(image.data, {
      raw: { width: image.width, height: image.height, channels: image.channels },
    })
      .jpeg({ quality: 85 })
      .toBuffer();
    const response = await request(endpoint, {
      method: 'POST',
      signal: AbortSignal.timeout(config.timeoutMs),
      headers: {
        'content-type': 'application/json',
        ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: config.model,
        temperature: 0,
        max_tokens: 300,
        response_format: { type: 'json_object' },
        messages: [
          { role: 'system', content: PROMPT },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Judge this photo.' },
              { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}` } },
            ],
          },
        ],
      }),
    });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode > 299) {
      throw new VlmError(`the endpoint answered HTTP ${response.statusCode}`);
    }
    if (text.length > MAX_ANSWER_BYTES) throw new VlmError('the answer is too long');
    let completion: unknown;
    try {
      completion = JSON.parse(text);
    } catch {
      throw new VlmError('the endpoint did not answer JSON');
    }
    return verdictFromAnswer(parseAnswer(contentOf(completion)), performance.now() - started);
  };

  return {
    ready: () => fallback?.ready() ?? Promise.resolve(),
    isReady: () => fallback?.isReady() ?? true,
    async classify(image) {
      try {
        return await ask(image);
      } catch (error) {
        if (!fallback) throw error;
        onError?.(error);
        return fallback.classify(image);
      }
    },
    close: () => fallback?.close() ?? Promise.resolve(),
  };
}
