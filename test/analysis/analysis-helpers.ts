/**
 * Shared pieces of the analyzer's tests: a loopback image server, generated photos, a deterministic
 * fake of the vision model, tokens, and a minimal Fastify app with the project's HTTP conventions.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { nowSeconds, sign } from '../helpers/auth-fixtures.ts';
import sharp from 'sharp';
import { createAuthorize, type Authorize } from '../../src/http/authorize.ts';
import { createTokenVerifier } from '../../src/auth/verify-token.ts';
import { registerErrorHandler } from '../../src/http/error-handler.ts';
import { registerJsonBodyParser } from '../../src/http/json-body.ts';
import { createValidatorCompiler } from '../../src/http/validator-compiler.ts';
import { analysisRoutes } from '../../src/analysis/analysis.routes.ts';
import type { AnalysisService } from '../../src/analysis/analysis.service.ts';
import type { RawImage, SceneClassifier, SceneVerdict } from '../../src/analysis/scene-types.ts';

export const TEST_SECRET = 'analysis-tests-secret-that-is-long-enough-for-hs256';
export const TENANT_CLAIM = 'tenant_id';

/** A bearer token; `tenant: null` leaves the tenant claim out. */
export async function mintToken(
  options: { tenant?: string | null; scope?: string; secret?: string; expiresInSeconds?: number } = {},
): Promise<string> {
  const claims: Record<string, unknown> = {
    scope: options.scope ?? 'analysis:run',
    exp: nowSeconds() + (options.expiresInSeconds ?? 300),
  };
  const tenant = options.tenant === undefined ? 'acme' : options.tenant;
  if (tenant !== null) claims[TENANT_CLAIM] = tenant;
  return sign(new TextEncoder().encode(options.secret ?? TEST_SECRET), claims);
}

/**
 * A Fastify app with only the analysis route, wired as src/app/build-app.ts wires every route; tokens
 * are checked against TEST_SECRET unless `authorize` says otherwise.
 */
export async function buildAnalysisApp(
  analysis: AnalysisService,
  authorize: Authorize = createAuthorize(
    createTokenVerifier({
      keys: { secret: new TextEncoder().encode(TEST_SECRET), asymmetric: undefined },
      tenantClaim: TENANT_CLAIM,
    }),
  ),
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.setValidatorCompiler(createValidatorCompiler());
  registerJsonBodyParser(app);
  registerErrorHandler(app, 'http://localhost');
  await app.register(analysisRoutes({ analysis, authorize }));
  await app.ready();
  return app;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A loopback HTTP server answering `routes[path]`; 404 for anything else. */
export async function startServer(
  routes: Record<string, Handler>,
  host = '127.0.0.1',
): Promise<{ url: (path: string) => string; port: number; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    const handler = routes[(request.url ?? '/').split('?')[0]!];
    if (handler) handler(request, response);
    else response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path) => `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Serves `body` with `type`. */
export const serve =
  (body: Buffer | string, type = 'image/jpeg'): Handler =>
  (_request, response) =>
    response.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);

/** Answers a redirect to `location`. */
export const redirect =
  (location: string, status = 302): Handler =>
  (_request, response) =>
    response.writeHead(status, { location }).end();

/**
 * A photo-like test picture: a lit wall with panels above a darker floor, with a seeded fine grain,
 * so it is sharp (strong edges and texture) and well exposed. `level` shifts the brightness.
 */
export async function roomPhoto(
  width: number,
  height: number,
  options: { level?: number } = {},
): Promise<Buffer> {
  const level = options.level ?? 0;
  const data = Buffer.alloc(width * height * 3);
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 2 - 1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const floor = y > height * 0.65;
      const panel = !floor && Math.floor((x / width) * 6) % 2 === 0 && y > height * 0.15;
      const base = floor ? 95 : panel ? 190 : 160;
      const grain = random() * 14;
      const value = Math.max(0, Math.min(255, base + grain + level));
      const i = (y * width + x) * 3;
      data[i] = value;
      data[i + 1] = Math.max(0, Math.min(255, value - 8));
      data[i + 2] = Math.max(0, Math.min(255, value - 20));
    }
  }
  return sharp(data, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** The same picture with a strong Gaussian blur (σ = 8 px). */
export async function blurred(photo: Buffer): Promise<Buffer> {
  return sharp(photo).blur(8).jpeg({ quality: 90 }).toBuffer();
}

/** A flat picture of one grey level (black, blown-out white…). */
export async function solid(width: number, height: number, grey: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: grey, g: grey, b: grey } } })
    .png()
    .toBuffer();
}

/** Decodes like the model's decoder promises (scene-types RawImage): oriented RGB, long side ≤ 512. */
export async function decodeForTests(buffer: Buffer): Promise<RawImage> {
  const { data, info } = await sharp(buffer, { autoOrient: true })
    .flatten({ background: '#ffffff' })
    .resize({ width: 512, height: 512, fit: 'inside', withoutEnlargement: true })
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 };
}

/** A model verdict: an empty bedroom the model is sure of, unless `overrides` says otherwise. */
export function verdict(overrides: Partial<SceneVerdict> = {}): SceneVerdict {
  return {
    roomType: 'bedroom',
    roomConfidence: 0.95,
    roomProbabilities: { bedroom: 0.95, living_room: 0.03, corridor: 0.02 },
    scene: 'interior',
    sceneProbabilities: { interior: 0.98, exterior: 0.01, floor_plan: 0.005, other: 0.005 },
    personScore: 0,
    objects: [],
    furnished: false,
    inferenceMs: 1,
    ...overrides,
  };
}

/**
 * A deterministic stand-in for the vision model; `pick` chooses the verdict per decoded image. With
 * `hold`, every image stays at the model (counted in `calls`) until `hold` resolves: a test that
 * needs the analyzer busy opens it when it is done, and no timer decides how long the work takes.
 */
export function fakeClassifier(
  pick: (image: RawImage) => SceneVerdict = () => verdict(),
  options: { hold?: Promise<void> } = {},
): SceneClassifier & { calls: number } {
  const fake = {
    calls: 0,
    ready: async () => undefined,
    isReady: () => true,
    classify: async (image: RawImage) => {
      fake.calls += 1;
      if (options.hold) await options.hold;
      return pick(image);
    },
    close: async () => undefined,
  };
  return fake;
}

/** A closed gate: `closed` resolves once `open` is called (for `fakeClassifier`'s `hold`). */
export function gate(): { closed: Promise<void>; open: () => void } {
  let open!: () => void;
  const closed = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { closed, open };
}

/** Resolves once `condition` holds; fails the test if it does not within `ms`. */
export async function reached(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not reached within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Posts `body` to the analysis route of `app`; `authorization: null` sends no Authorization header. */
export async function postAnalysis(app: FastifyInstance, body: unknown, authorization: string | null) {
  const response = await app.inject({
    method: 'POST',
    url: '/analysis/stageability/multiple',
    headers: { 'content-type': 'application/json', ...(authorization === null ? {} : { authorization }) },
    payload: JSON.stringify(body),
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    body: response.json<Record<string, unknown>>(),
  };
}
