import { ConfigError, integer, optional } from '../config-values.ts';
import { DEFAULT_DECODE_MEMORY_BYTES, MIB } from './decode-budget.ts';

/** Where and how to reach an OpenAI-compatible vision-language endpoint (the optional provider). */
export interface VlmConfig {
  /** Base URL (`…/v1`) or the full `…/chat/completions` URL. */
  url: string;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
}

/** Defaults of the analyzer's limits, used when the environment or a caller does not set them. */
export const ANALYSIS_DEFAULTS = {
  cacheTtlSeconds: 300,
  maxConcurrentImages: 16,
  maxQueuedImages: 100,
  maxImagesPerTenant: 40,
  decodeMemoryBytes: DEFAULT_DECODE_MEMORY_BYTES,
} as const;

/** The analyzer's own settings; `loadConfig` reads them with the rest, into `config.analysis`. */
export interface AnalysisConfig {
  /** Set only when ANALYSIS_VLM_URL is: the provider is off by default. */
  vlm: VlmConfig | undefined;
  cacheTtlMs: number;
  maxConcurrentImages: number;
  maxQueuedImages: number;
  maxImagesPerTenant: number;
  decodeMemoryBytes: number;
}

/**
 * Reads ANALYSIS_VLM_URL, ANALYSIS_VLM_MODEL, ANALYSIS_VLM_API_KEY, ANALYSIS_VLM_TIMEOUT_MS,
 * ANALYSIS_CACHE_TTL_SECONDS, ANALYSIS_MAX_CONCURRENT_IMAGES, ANALYSIS_MAX_QUEUED_IMAGES,
 * ANALYSIS_MAX_IMAGES_PER_TENANT and ANALYSIS_DECODE_MEMORY_MB (docs/analyzer.md lists their
 * defaults).
 */
export function loadAnalysisConfig(env: NodeJS.ProcessEnv = process.env): AnalysisConfig {
  const url = optional(env, 'ANALYSIS_VLM_URL');
  let vlm: VlmConfig | undefined;
  if (url !== undefined) {
    if (!/^https?:\/\/[^/]/i.test(url)) throw new ConfigError('ANALYSIS_VLM_URL must be an http(s) URL');
    const model = optional(env, 'ANALYSIS_VLM_MODEL');
    if (model === undefined)
      throw new ConfigError('ANALYSIS_VLM_MODEL is required when ANALYSIS_VLM_URL is set');
    vlm = {
      url,
      model,
      apiKey: optional(env, 'ANALYSIS_VLM_API_KEY'),
      timeoutMs: integer(env, 'ANALYSIS_VLM_TIMEOUT_MS', 30_000, 1),
    };
  }
  return {
    vlm,
    cacheTtlMs: integer(env, 'ANALYSIS_CACHE_TTL_SECONDS', ANALYSIS_DEFAULTS.cacheTtlSeconds, 0) * 1000,
    maxConcurrentImages: integer(
      env,
      'ANALYSIS_MAX_CONCURRENT_IMAGES',
      ANALYSIS_DEFAULTS.maxConcurrentImages,
      1,
    ),
    maxQueuedImages: integer(env, 'ANALYSIS_MAX_QUEUED_IMAGES', ANALYSIS_DEFAULTS.maxQueuedImages, 0),
    // At least one request's worth, or a tenant could never be served.
    maxImagesPerTenant: integer(
      env,
      'ANALYSIS_MAX_IMAGES_PER_TENANT',
      ANALYSIS_DEFAULTS.maxImagesPerTenant,
      10,
    ),
    decodeMemoryBytes:
      integer(env, 'ANALYSIS_DECODE_MEMORY_MB', ANALYSIS_DEFAULTS.decodeMemoryBytes / MIB, 64) * MIB,
  };
}
