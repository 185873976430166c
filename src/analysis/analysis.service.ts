import { createHash } from 'node:crypto';
import type { AnalysisResult, AnalysisSummary, ImageAnalysis } from './analysis.schemas.ts';
import { ANALYSIS_DEFAULTS, type VlmConfig } from './analysis-config.ts';
import { createDecodeBudget, DecodeTooLargeError } from './decode-budget.ts';
import {
  asUndecodable,
  measureImageQuality,
  readImageHeader,
  UndecodableImageError,
} from './image-quality.ts';
import { FetchFailure } from './fetch-failure.ts';
import { createSafeFetch, type FetchImage } from './safe-fetch.ts';
import type { RawImage, SceneClassifier } from './scene-types.ts';
import { decideStageability, type StageabilityDecision } from './stageability.ts';
import { THRESHOLDS, type Thresholds } from './thresholds.ts';
import { createTtlCache } from '../runtime/ttl-cache.ts';
import { createVlmClassifier } from './vlm-classifier.ts';
import { createWorkQueue, QueueFullError } from './work-queue.ts';
import { RateLimitedError } from '../errors/app-errors.ts';

/** Analyzes image URLs for virtual staging; knows nothing of HTTP. */
export interface AnalysisService {
  /**
   * One entry per URL, in order; throws `RateLimitedError` when the analyzer's backlog is full or
   * `tenant` already holds its share of it.
   */
  analyze(urls: string[], tenant?: string): Promise<AnalysisResult>;
  /** Resolves once the model is loaded (readiness waits on it). */
  ready(): Promise<void>;
  isReady(): boolean;
  close(): Promise<void>;
}

/** What the service is built from; only the classifier, the decoder and the host policy are required. */
export interface AnalysisServiceDependencies {
  classifier: SceneClassifier;
  /** The model's decoder (`decodeForModel` of src/analysis/model/decode-for-model.ts). */
  decode: (image: Buffer) => Promise<RawImage>;
  allowPrivateHosts: boolean;
  /** Defaults to {@link createSafeFetch} with `allowPrivateHosts`. */
  fetchImage?: FetchImage;
  /** When set, an OpenAI-compatible endpoint classifies and the local model is its fallback. */
  vlm?: VlmConfig | undefined;
  thresholds?: Thresholds;
  cacheTtlMs?: number;
  maxConcurrentImages?: number;
  maxQueuedImages?: number;
  /** Images one tenant may have in work or waiting at once. */
  maxImagesPerTenant?: number;
  /** Estimated memory the images being decoded at once may take together (default 1 GiB). */
  decodeMemoryBytes?: number;
  /** Told about failures that are the analyzer's, not the image's (a model crash, a VLM outage). */
  onError?: (error: unknown, context: { url?: string }) => void;
  now?: () => number;
}

// Seconds a client should wait when the analyzer's queue is full: about one request's worth of work.
const BUSY_RETRY_AFTER_SECONDS = 5;

/** The entry of a URL that could not be analyzed (docs/reference.md §8). */
export function unanalyzable(imageUrl: string, details: string): ImageAnalysis {
  return { isStageable: false, roomType: 'unknown', confidence: 0, details, imageUrl };
}

/** The spec's summary: counts, mean confidence, distinct room types in order of first appearance. */
export function summarize(images: ImageAnalysis[]): AnalysisSummary {
  const stageableImages = images.filter((image) => image.isStageable).length;
  const roomTypes = [...new Set(images.map((image) => image.roomType))].filter((room) => room !== 'unknown');
  const total = images.reduce((sum, image) => sum + image.confidence, 0);
  return {
    totalImages: images.length,
    stageableImages,
    nonStageableImages: images.length - stageableImages,
    confidence: images.length === 0 ? 0 : total / images.length,
    roomTypes,
  };
}

/**
 * Creates the analysis service. Per image: safe fetch, header, one decode (the model's), quality
 * measured on that copy, classification, then the decision. Results are cached by URL and by
 * content hash (the same photo behind two URLs is analyzed once); concurrent requests for one URL
 * share one analysis.
 */
export function createAnalysisService(deps: AnalysisServiceDependencies): AnalysisService {
  const thresholds = deps.thresholds ?? THRESHOLDS;
  const onError = deps.onError ?? (() => undefined);
  const classifier = deps.vlm
    ? createVlmClassifier(deps.vlm, { fallback: deps.classifier, onError: (error) => onError(error, {}) })
    : deps.classifier;
  const fetchImage = deps.fetchImage ?? createSafeFetch({ allowPrivateHosts: deps.allowPrivateHosts });
  const cacheOptions = {
    ttlMs: deps.cacheTtlMs ?? ANALYSIS_DEFAULTS.cacheTtlSeconds * 1000,
    maxEntries: 2000,
    ...(deps.now && { now: deps.now }),
  };
  const byUrl = createTtlCache<StageabilityDecision>(cacheOptions);
  const byContent = createTtlCache<StageabilityDecision>(cacheOptions);
  const inFlight = new Map<string, Promise<StageabilityDecision | string>>();
  const queue = createWorkQueue({
    maxRunning: deps.maxConcurrentImages ?? ANALYSIS_DEFAULTS.maxConcurrentImages,
    maxWaiting: deps.maxQueuedImages ?? ANALYSIS_DEFAULTS.maxQueuedImages,
    maxPerOwner: deps.maxImagesPerTenant ?? ANALYSIS_DEFAULTS.maxImagesPerTenant,
  });
  // The work queue bounds the images in work; this bounds what their decodes take together, which
  // the image's bytes do not (a small AVIF may decode to gigabytes).
  const decodeBudget = createDecodeBudget(deps.decodeMemoryBytes ?? ANALYSIS_DEFAULTS.decodeMemoryBytes);

  /** The decision for the bytes of one image, or the sentence saying why there is none. */
  const analyzeBytes = async (
    body: Buffer,
    url: string,
    tenant: string,
  ): Promise<StageabilityDecision | string> => {
    const hash = createHash('sha256').update(body).digest('hex');
    const known = byContent.get(hash);
    if (known) return known;
    let decision: StageabilityDecision;
    try {
      // One decode serves both: the model's copy is also the fixed-size copy quality is measured on.
      const header = await readImageHeader(body);
      const { raw, quality } = await decodeBudget.run(header.decodeBytes, tenant, async () => {
        const raw = await deps.decode(body).catch((error: unknown) => Promise.reject(asUndecodable(error)));
        return { raw, quality: await measureImageQuality(body, { header, decoded: raw, thresholds }) };
      });
      await classifier.ready();
      decision = decideStageability(quality, await classifier.classify(raw), thresholds);
    } catch (error) {
      if (error instanceof UndecodableImageError) return `Not a decodable image: ${error.message}`;
      if (error instanceof DecodeTooLargeError) {
        return (
          `Too large to decode: this image would take about ${error.neededMiB} MiB of memory to decode, ` +
          `more than the analyzer's ${error.budgetMiB} MiB; send a smaller copy`
        );
      }
      onError(error, { url });
      return 'The analyzer could not process this image; try again later';
    }
    byContent.set(hash, decision);
    return decision;
  };

  /** Fetches and analyzes one URL; never throws: a failure becomes its reason. */
  const analyzeUrl = async (url: string, tenant: string): Promise<StageabilityDecision | string> => {
    const cached = byUrl.get(url);
    if (cached) return cached;
    let body: Buffer;
    try {
      ({ body } = await fetchImage(url));
    } catch (error) {
      if (error instanceof FetchFailure) return error.message;
      onError(error, { url });
      return 'The image could not be fetched';
    }
    const result = await analyzeBytes(body, url, tenant);
    if (typeof result !== 'string') byUrl.set(url, result);
    return result;
  };

  const shared = (url: string, tenant: string): Promise<StageabilityDecision | string> => {
    const running = inFlight.get(url);
    if (running) return running;
    const started = analyzeUrl(url, tenant).finally(() => inFlight.delete(url));
    inFlight.set(url, started);
    return started;
  };

  return {
    async analyze(urls, tenant = '') {
      const tasks = urls.map((url) => () => shared(url, tenant));
      const results = await queue.runAll(tasks, tenant).catch((error: unknown) => {
        if (!(error instanceof QueueFullError)) throw error;
        throw new RateLimitedError(error.message, { retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS });
      });
      const images = results.map((result, index) => {
        const imageUrl = urls[index]!;
        return typeof result === 'string' ? unanalyzable(imageUrl, result) : { ...result, imageUrl };
      });
      return { images, summary: summarize(images) };
    },
    ready: () => classifier.ready(),
    isReady: () => classifier.isReady(),
    close: () => classifier.close(),
  };
}
