import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadAnalysisConfig, type VlmConfig } from '../../src/analysis/analysis-config.ts';
import { createAnalysisService } from '../../src/analysis/analysis.service.ts';
import {
  completionsUrl,
  createVlmClassifier,
  parseAnswer,
  VlmError,
} from '../../src/analysis/vlm-classifier.ts';
import { ConfigError } from '../../src/config.ts';
import {
  decodeForTests,
  fakeClassifier,
  roomPhoto,
  serve,
  startServer,
  verdict,
} from './analysis-helpers.ts';

/** What the stand-in endpoint answers next: a chat message content, or a bare HTTP status. */
let reply: { content: string } | { status: number } = { content: '{}' };
let received: { headers: Record<string, unknown>; body: Record<string, unknown> }[] = [];

let endpoint: Awaited<ReturnType<typeof startServer>>;
let images: Awaited<ReturnType<typeof startServer>>;
let config: VlmConfig;

before(async () => {
  endpoint = await startServer({
    '/v1/chat/completions': (request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => {
        received.push({ headers: request.headers, body: JSON.parse(text) as Record<string, unknown> });
        if ('status' in reply) {
          response.writeHead(reply.status, { 'content-type': 'application/json' }).end('{"error":"down"}');
          return;
        }
        const completion = {
          id: 'x',
          choices: [{ index: 0, message: { role: 'assistant', content: reply.content } }],
        };
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
      });
    },
  });
  images = await startServer({ '/room.jpg': serve(await roomPhoto(1024, 768)) });
  config = { url: endpoint.url('/v1'), model: 'test-vision', apiKey: 'sk-test', timeoutMs: 2000 };
});

after(async () => {
  await endpoint.close();
  await images.close();
});

const image = async () => decodeForTests(await roomPhoto(640, 480));

void test('asks the endpoint with the model, the key and the picture as a JPEG data URL', async () => {
  received = [];
  reply = {
    content:
      '{"scene":"interior","roomType":"kitchen","confidence":0.9,"personInFrame":false,"furnished":true}',
  };
  const result = await createVlmClassifier(config).classify(await image());
  assert.equal(received.length, 1);
  const { headers, body } = received[0]!;
  assert.equal(headers.authorization, 'Bearer sk-test');
  assert.equal(body.model, 'test-vision');
  assert.equal(body.temperature, 0);
  assert.deepEqual(body.response_format, { type: 'json_object' });
  assert.match(JSON.stringify(body.messages), /"image_url":\{"url":"data:image\/jpeg;base64,\/9j\//);
  assert.equal(result.roomType, 'kitchen');
  assert.equal(result.scene, 'interior');
  assert.equal(result.furnished, true);
  assert.equal(result.personScore, 0.05);
  assert.deepEqual(result.roomProbabilities, { kitchen: 0.9 });
  assert.equal(result.sceneProbabilities.interior, 0.9);
});

void test('validates and clamps the answer, even wrapped in a fence', async () => {
  reply = {
    content:
      'Sure:\n```json\n{"scene":"interior","roomType":"throne_room","confidence":1.7,"sceneConfidence":-3,"personInFrame":true}\n```',
  };
  const result = await createVlmClassifier(config).classify(await image());
  assert.equal(result.roomType, 'unknown', 'a room outside the list becomes unknown');
  assert.equal(result.roomConfidence, 1);
  assert.equal(result.sceneProbabilities.interior, 0);
  assert.equal(result.personScore, 0.9);
  assert.equal(result.furnished, false);
});

void test('refuses answers without the verdict shape', () => {
  assert.throws(() => parseAnswer('no json here'), VlmError);
  assert.throws(() => parseAnswer('{"scene":"garden","roomType":"patio"}'), VlmError);
  assert.throws(() => parseAnswer('{"scene":"interior"}'), VlmError);
  assert.throws(() => parseAnswer('{"scene":"interior","roomType":"bedroom","confidence":"high"}'), VlmError);
  assert.deepEqual(parseAnswer('{"scene":"exterior","roomType":"exterior"}'), {
    scene: 'exterior',
    roomType: 'exterior',
  });
});

void test('without a fallback a failing endpoint is an error; with one, the local model answers', async () => {
  reply = { status: 500 };
  await assert.rejects(createVlmClassifier(config).classify(await image()), /HTTP 500/);
  reply = { content: '{"scene":"basement"}' };
  const logged: unknown[] = [];
  const local = fakeClassifier(() => verdict({ roomType: 'dining_room' }));
  const withFallback = createVlmClassifier(config, {
    fallback: local,
    onError: (error) => logged.push(error),
  });
  assert.equal((await withFallback.classify(await image())).roomType, 'dining_room');
  assert.equal(local.calls, 1);
  assert.ok(logged[0] instanceof VlmError);
});

/** The room photo analyzed by a service that asks the stand-in endpoint, with `local` as fallback. */
function analyzeWithEndpoint(local: ReturnType<typeof fakeClassifier>) {
  const service = createAnalysisService({
    classifier: local,
    decode: decodeForTests,
    allowPrivateHosts: true,
    vlm: config,
  });
  return service.analyze([images.url('/room.jpg')]);
}

void test('the service uses the endpoint when configured, the local model as its fallback', async () => {
  reply = {
    content:
      '{"scene":"interior","roomType":"living_room","confidence":0.8,"sceneConfidence":0.95,"personInFrame":true}',
  };
  const local = fakeClassifier();
  const result = await analyzeWithEndpoint(local);
  assert.deepEqual(result.images[0], {
    isStageable: false,
    roomType: 'living_room',
    confidence: result.images[0]!.confidence,
    details: 'Person in frame: staging needs a photo without people',
    imageUrl: images.url('/room.jpg'),
  });
  assert.ok(result.images[0].confidence > 0.99 - 1e-9);
  assert.equal(local.calls, 0);
});

void test('an empty living room, which the local model leaves unknown, is named by the endpoint', async () => {
  // What an OpenAI-compatible vision model answers for a vacant living room (a fenced JSON object).
  reply = {
    content: [
      '```json',
      '{"scene": "interior", "roomType": "living_room", "confidence": 0.74, "sceneConfidence": 0.98,',
      ' "personInFrame": false, "furnished": false}',
      '```',
    ].join('\n'),
  };
  received = [];
  const local = fakeClassifier(() => verdict({ roomType: 'unknown', furnished: false }));
  const result = await analyzeWithEndpoint(local);
  assert.deepEqual(result.images[0], {
    isStageable: true,
    roomType: 'living_room',
    confidence: result.images[0]!.confidence,
    details: 'Empty living room, 1024×768, sharp and well lit',
    imageUrl: images.url('/room.jpg'),
  });
  assert.equal(local.calls, 0);
  assert.deepEqual(result.summary.roomTypes, ['living_room']);
  // The prompt asks for empty rooms to be named, and says fixtures are not furniture.
  const prompt = JSON.stringify(received[0]!.body);
  assert.match(prompt, /Name an empty room too/);
  assert.match(prompt, /are not furniture/);
});

void test('reads its settings from the environment; the provider is off by default', () => {
  assert.deepEqual(loadAnalysisConfig({}), {
    vlm: undefined,
    cacheTtlMs: 300_000,
    maxConcurrentImages: 16,
    maxQueuedImages: 100,
    maxImagesPerTenant: 40,
    decodeMemoryBytes: 1024 * 1024 * 1024,
  });
  assert.deepEqual(
    loadAnalysisConfig({
      ANALYSIS_VLM_URL: 'http://127.0.0.1:9/v1',
      ANALYSIS_VLM_MODEL: 'qwen2.5-vl',
      ANALYSIS_VLM_API_KEY: 'k',
      ANALYSIS_CACHE_TTL_SECONDS: '0',
    }).vlm,
    { url: 'http://127.0.0.1:9/v1', model: 'qwen2.5-vl', apiKey: 'k', timeoutMs: 30_000 },
  );
  assert.throws(() => loadAnalysisConfig({ ANALYSIS_VLM_URL: 'http://127.0.0.1:9/v1' }), ConfigError);
  assert.throws(
    () => loadAnalysisConfig({ ANALYSIS_VLM_URL: 'file:///x', ANALYSIS_VLM_MODEL: 'm' }),
    ConfigError,
  );
  const refusal = (message: string) => (error: unknown) =>
    error instanceof ConfigError && error.message === message;
  assert.throws(
    () => loadAnalysisConfig({ ANALYSIS_MAX_CONCURRENT_IMAGES: '0' }),
    refusal('ANALYSIS_MAX_CONCURRENT_IMAGES must be an integer from 1 up'),
  );
  assert.throws(
    () => loadAnalysisConfig({ ANALYSIS_MAX_QUEUED_IMAGES: 'many' }),
    refusal('ANALYSIS_MAX_QUEUED_IMAGES must be an integer from 0 up'),
  );
  assert.throws(
    () => loadAnalysisConfig({ ANALYSIS_MAX_IMAGES_PER_TENANT: '9' }),
    refusal('ANALYSIS_MAX_IMAGES_PER_TENANT must be an integer from 10 up'),
  );
  assert.equal(loadAnalysisConfig({ ANALYSIS_DECODE_MEMORY_MB: '256' }).decodeMemoryBytes, 256 * 1024 * 1024);
  assert.throws(
    () => loadAnalysisConfig({ ANALYSIS_DECODE_MEMORY_MB: '63' }),
    refusal('ANALYSIS_DECODE_MEMORY_MB must be an integer from 64 up'),
  );
});

void test('posts to <url>/chat/completions unless the URL already names it', () => {
  assert.equal(completionsUrl('https://api.example.com/v1'), 'https://api.example.com/v1/chat/completions');
  assert.equal(completionsUrl('https://api.example.com/v1/'), 'https://api.example.com/v1/chat/completions');
  assert.equal(
    completionsUrl('http://127.0.0.1:8000/v1/chat/completions'),
    'http://127.0.0.1:8000/v1/chat/completions',
  );
});
