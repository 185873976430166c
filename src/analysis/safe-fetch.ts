import { request, type Dispatcher } from 'undici';
import { blockedCategory } from '../net/address-policy.ts';
import {
  abortable,
  checkHost,
  createPinnedAgent,
  HostRefusedError,
  type AddressPolicy,
  type ResolveHost,
} from '../net/pinned-host.ts';
import { looksLikeImage } from './image-quality.ts';
import { FetchFailure, toFetchFailure } from './fetch-failure.ts';

/** The bytes of a fetched image and where they finally came from. */
export interface FetchedImage {
  body: Buffer;
  contentType: string;
  finalUrl: string;
}

/** Fetches one image URL or throws a {@link FetchFailure}. */
export type FetchImage = (url: string, signal?: AbortSignal) => Promise<FetchedImage>;

/** Limits of docs/reference.md §8, overridable for tests. */
export interface SafeFetchOptions {
  allowPrivateHosts: boolean;
  /** Whole fetch, all redirect hops and the body included. */
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  resolveHost?: ResolveHost;
  /** Which addresses are refused; defaults to {@link blockedCategory} with `allowPrivateHosts`. */
  addressPolicy?: AddressPolicy;
}

const MiB = 1024 * 1024;
const MAX_URL_LENGTH = 8192;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// What an image server may call its images when it does not say image/*: then the bytes must say it.
const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/binary']);

function parseUrl(raw: string, base?: URL): URL {
  if (raw.length > MAX_URL_LENGTH)
    throw new FetchFailure('invalid-url', `URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new FetchFailure(
      base ? 'bad-redirect' : 'invalid-url',
      base ? `Redirect to an invalid URL: ${raw}` : 'Not a valid URL',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchFailure(
      'unsupported-scheme',
      `Only http and https URLs can be fetched, not ${url.protocol}`,
    );
  }
  if (url.username || url.password) {
    throw new FetchFailure('invalid-url', 'URLs with credentials (user:password@) are not fetched');
  }
  return url;
}

/**
 * Creates the image fetcher of docs/reference.md §8. Each hop's host is resolved here, every address is
 * checked, and the connection is made to the checked address itself (a pinned `lookup`), so a DNS
 * answer cannot change between check and connect. Redirects are followed by hand so that every hop
 * is checked again.
 */
export function createSafeFetch(options: SafeFetchOptions): FetchImage {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBytes = options.maxBytes ?? 25 * MiB;
  const maxRedirects = options.maxRedirects ?? 3;
  const policy: AddressPolicy =
    options.addressPolicy ?? ((address) => blockedCategory(address, options.allowPrivateHosts));
  /** Resolves and checks one host (net/pinned-host.ts); a refusal is the image's fetch failure. */
  const checkUrlHost = (url: URL) =>
    checkHost(url, { policy, resolveHost: options.resolveHost }).catch((error: unknown) => {
      throw error instanceof HostRefusedError ? new FetchFailure(error.kind, error.message) : error;
    });

  return async (rawUrl, outerSignal) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = outerSignal ? AbortSignal.any([timeout, outerSignal]) : timeout;
    const pinned = createPinnedAgent(timeoutMs);
    try {
      let url = parseUrl(rawUrl);
      for (let hop = 0; ; hop++) {
        pinned.pin(url.hostname, await abortable(checkUrlHost(url), signal));
        const response = await request(url, {
          method: 'GET',
          dispatcher: pinned.agent,
          signal,
          headers: { accept: 'image/*', 'user-agent': 'stageability-analyzer/0.1' },
        });
        if (REDIRECTS.has(response.statusCode)) {
          discard(response.body);
          const location = response.headers.location;
          if (typeof location !== 'string' || location === '') {
            throw new FetchFailure(
              'bad-redirect',
              `HTTP ${response.statusCode} redirect without a Location header`,
            );
          }
          if (hop >= maxRedirects) {
            throw new FetchFailure('too-many-redirects', `Too many redirects (more than ${maxRedirects})`);
          }
          url = parseUrl(location, url);
          continue;
        }
        if (response.statusCode < 200 || response.statusCode > 299) {
          discard(response.body);
          throw new FetchFailure('http-status', `The image server answered HTTP ${response.statusCode}`);
        }
        const contentType = headerValue(response.headers['content-type']).split(';')[0]!.trim().toLowerCase();
        if (
          contentType === 'image/svg+xml' ||
          (!contentType.startsWith('image/') && !GENERIC_TYPES.has(contentType))
        ) {
          discard(response.body);
          throw new FetchFailure(
            'not-an-image',
            `Not an image: the server sent ${contentType || 'no content type'}`,
          );
        }
        const declared = Number(headerValue(response.headers['content-length']) || NaN);
        if (declared > maxBytes) {
          discard(response.body);
          throw new FetchFailure(
            'too-large',
            `Image too large: ${formatMiB(declared)} (limit ${formatMiB(maxBytes)})`,
          );
        }
        const body = await readCapped(response.body, maxBytes);
        if (!contentType.startsWith('image/') && !looksLikeImage(body)) {
          throw new FetchFailure(
            'not-an-image',
            `Not an image: the server sent ${contentType || 'no content type'}`,
          );
        }
        return { body, contentType: contentType || 'application/octet-stream', finalUrl: url.href };
      }
    } catch (error) {
      throw toFetchFailure(error, timeout, timeoutMs);
    } finally {
      pinned.close();
    }
  };
}

type BodyReadable = Dispatcher.ResponseData['body'];
async function readCapped(body: BodyReadable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // undici yields Buffers; its iterator type says `any`.
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      discard(body);
      throw new FetchFailure('too-large', `Image too large: more than ${formatMiB(maxBytes)}`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** Drops a body we will not read; undici reports the abort as an error nobody needs to hear. */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => undefined);
  body.destroy();
}

function headerValue(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function formatMiB(bytes: number): string {
  return `${Math.round((bytes / MiB) * 10) / 10} MiB`;
}
