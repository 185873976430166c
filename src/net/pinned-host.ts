import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent } from 'undici';
import type { BlockedCategory } from './address-policy.ts';

/**
 * Outgoing connections that reach only addresses the policy allows: a host is resolved and every
 * answer checked before connecting, and the connection is made to a checked address itself (a
 * pinned `lookup`), so a DNS answer cannot change between check and connect. Shared by the
 * analyzer's image fetches (docs/reference.md §8) and webhook deliveries (§10.1).
 */

/** Resolves a host name to its addresses (a seam for tests; defaults to the system resolver). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

/** Which addresses are refused: the category that forbids one, or undefined when it may be reached. */
export type AddressPolicy = (address: string) => BlockedCategory | undefined;

/** A host that may not be connected to: it does not resolve, or resolves to a refused address. */
export class HostRefusedError extends Error {
  readonly kind: 'host-not-found' | 'blocked-address';

  constructor(kind: 'host-not-found' | 'blocked-address', message: string) {
    super(message);
    this.kind = kind;
  }
}

const systemResolve: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Resolves and checks the host of `url`; answers the addresses to connect to, in the resolver's
 * order, or throws a {@link HostRefusedError} whose message says why in words a person can act on.
 */
export async function checkHost(
  url: URL,
  { policy, resolveHost = systemResolve }: { policy: AddressPolicy; resolveHost?: ResolveHost },
): Promise<LookupAddress[]> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(hostname);
  let addresses: LookupAddress[];
  if (literal) {
    addresses = [{ address: hostname, family: literal }];
  } else if (/(^|\.)invalid\.?$/i.test(hostname)) {
    // RFC 6761: names under .invalid never resolve; answer so without asking a DNS server.
    throw new HostRefusedError('host-not-found', `Host not found: ${hostname}`);
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
      throw new HostRefusedError('host-not-found', `Host not found: ${hostname}`);
    }
    if (addresses.length === 0) throw new HostRefusedError('host-not-found', `Host not found: ${hostname}`);
  }
  // One forbidden answer refuses the host: a name mixing public and private addresses is a trick.
  for (const { address } of addresses) {
    const category = policy(address);
    if (category) {
      // A name's address is not shown: the answer must not tell a caller what internal names
      // resolve to. An address the URL itself names is the caller's own text.
      throw new HostRefusedError(
        'blocked-address',
        literal
          ? `Blocked address: ${address} is ${article(category)} address`
          : `Blocked address: ${hostname} resolves to ${article(category)} address`,
      );
    }
  }
  return addresses;
}

/** An undici agent that connects only to addresses pinned for a host name by {@link PinnedAgent.pin}. */
export interface PinnedAgent {
  agent: Agent;
  /** The checked addresses `hostname` connects to from now on. */
  pin(hostname: string, addresses: LookupAddress[]): void;
  /** Closes the agent's connections; never throws. */
  close(): void;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** Creates an agent whose connections go only to pinned addresses; an unpinned host fails to connect. */
export function createPinnedAgent(connectTimeoutMs: number): PinnedAgent {
  const pinned = new Map<string, LookupAddress[]>();
  const agent = new Agent({
    connect: {
      timeout: connectTimeoutMs,
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
  return {
    agent,
    pin: (hostname, addresses) => pinned.set(hostname, addresses),
    close: () => void agent.destroy().catch(() => undefined),
  };
}

/** Rejects as soon as `signal` aborts, so a slow DNS answer counts against a timeout too. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

// OpenSSL's and Node's names for a failed handshake or an untrusted certificate.
const TLS_FAILURE = /^(EPROTO$|ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED|DEPTH_ZERO|HOSTNAME_MISMATCH)/;

/** Whether a connection error's `code` says its secure (TLS) connection failed. */
export function isTlsFailure(code: string): boolean {
  return TLS_FAILURE.test(code);
}

function article(category: string): string {
  return `${/^[aeiou]/i.test(category) ? 'an' : 'a'} ${category}`;
}
