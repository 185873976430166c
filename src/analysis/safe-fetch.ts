import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { blockedCategory, type BlockedCategory } from './address-policy.ts';
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

/** Resolves a host name to its addresses (a seam for tests; defaults to the system resolver). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

/** Limits of CONTRACT §8, overridable for tests. */
export interface SafeFetchOptions {
  allowPrivateHosts: boolean;
  /** Whole fetch, all redirect hops and the body included. */
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  resolveHost?: ResolveHost;
  /** Which addresses are refused; defaults to {@link blockedCategory} with `allowPrivateHosts`. */
  addressPolicy?: (address: string) => BlockedCategory | undefined;
}

const MiB = 1024 * 1024;
const MAX_URL_LENGTH = 8192;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// What an image server may call its images when it does not say image/*: then the bytes must say it.
const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/binary']);

const systemResolve: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

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
 * Creates the image fetcher of CONTRACT §8. Each hop's host is resolved here, every address is
 * checked, and the connection is made to the checked address itself (a pinned `lookup`), so a DNS
 * answer cannot change between check and connect. Redirects are followed by hand so that every hop
 * is checked again.
 */
export function createSafeFetch(options: SafeFetchOptions): FetchImage {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBytes = options.maxBytes ?? 25 * MiB;
  const maxRedirects = options.maxRedirects ?? 3;
  const resolveHost = options.resolveHost ?? systemResolve;
  const addressPolicy =
    options.addressPolicy ?? ((address) => blockedCategory(address, options.allowPrivateHosts));

  /** Resolves and checks one host; answers the addresses to connect to, in the resolver's order. */
  const checkHost = async (url: URL): Promise<LookupAddress[]> => {
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const literal = isIP(hostname);
    let addresses: LookupAddress[];
    if (literal) {
      addresses = [{ address: hostname, family: literal }];
    } else if (/(^|\.)invalid\.?$/i.test(hostname)) {
      // RFC 6761: names under .invalid never resolve; answer so without asking a DNS server.
      throw new FetchFailure('host-not-found', `Host not found: ${hostname}`);
    } else if (/(^|\.)localhost\.?$/i.test(hostname)) {
      // RFC 6761: localhost names are loopback whatever a resolver says. Both families: a server
      // that listens on `localhost` may have bound ::1 alone.
      addresses = [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    } else {
      try {
        addresses = await resolveHost(hostname);
      } catch {
        throw new FetchFailure('host-not-found', `Host not found: ${hostname}`);
      }
      if (addresses.length === 0) throw new FetchFailure('host-not-found', `Host not found: ${hostname}`);
    }
    // One forbidden answer refuses the host: a name mixing public and private addresses is a trick.
    for (const { address } of addresses) {
      const category = addressPolicy(address);
      if (category) {
        // A name's address is not shown: the answer must not tell a caller what internal names
        // resolve to. An address the URL itself names is the caller's own text.
        throw new FetchFailure(
          'blocked-address',
          literal
            ? `Blocked address: ${address} is ${article(category)} address`
            : `Blocked address: ${hostname} resolves to ${article(category)} address`,
        );
      }
    }
    return addresses;
  };

  return async (rawUrl, outerSignal) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = outerSignal ? AbortSignal.any([timeout, outerSignal]) : timeout;
    const pinned = new Map<string, LookupAddress[]>();
    const agent = new Agent({
      connect: {
        timeout: timeoutMs,
        // Each checked address is tried in turn, whatever the process-wide default.
        autoSelectFamily: true,
        lookup: (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback) => {
          const addresses = pinned.get(hostname);
          if (!addresses?.[0]) {
            callback(Object.assign(new Error(`unchecked host ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
          } else if (lookupOptions.all) {
            // Node tries each in turn (autoSelectFamily), as it would the resolver's own answer.
            callback(null, addresses);
          } else {
            callback(null, addresses[0].address, addresses[0].family);
          }
        },
      },
    });
    try {
      let url = parseUrl(rawUrl);
      for (let hop = 0; ; hop++) {
        pinned.set(url.hostname, await abortable(checkHost(url), signal));
        const response = await request(url, {
          method: 'GET',
          dispatcher: agent,
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
      agent.destroy().catch(() => undefined);
    }
  };
}

type BodyReadable = Dispatcher.ResponseData['body'];
type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

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

/** Rejects as soon as `signal` aborts, so a slow DNS answer counts against the timeout too. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function headerValue(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function formatMiB(bytes: number): string {
  return `${Math.round((bytes / MiB) * 10) / 10} MiB`;
}

function article(category: string): string {
  return `${/^[aeiou]/i.test(category) ? 'an' : 'a'} ${category}`;
}
