import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Why an address may not be fetched from; used in the `details` a caller reads. */
export type BlockedCategory =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'carrier-grade NAT'
  | 'cloud metadata'
  | 'multicast'
  | 'unspecified'
  | 'reserved';

/** Categories a deployment may open with ANALYSIS_ALLOW_PRIVATE_HOSTS=true or WEBHOOK_ALLOW_PRIVATE_HOSTS=true (tests, on-premise hosts). */
const PRIVATE_CATEGORIES: ReadonlySet<BlockedCategory> = new Set([
  'loopback',
  'private',
  'link-local',
  'carrier-grade NAT',
]);

type Rule = [category: BlockedCategory, family: 'ipv4' | 'ipv6', network: string, prefix: number];

// IANA special-purpose registries (RFC 6890 and successors). Order matters only for the name shown:
// the first matching rule names the category.
const RULES: Rule[] = [
  ['cloud metadata', 'ipv4', '169.254.169.254', 32],
  ['cloud metadata', 'ipv6', 'fd00:ec2::254', 128],
  ['unspecified', 'ipv4', '0.0.0.0', 8],
  ['private', 'ipv4', '10.0.0.0', 8],
  ['carrier-grade NAT', 'ipv4', '100.64.0.0', 10],
  ['loopback', 'ipv4', '127.0.0.0', 8],
  ['link-local', 'ipv4', '169.254.0.0', 16],
  ['private', 'ipv4', '172.16.0.0', 12],
  ['reserved', 'ipv4', '192.0.0.0', 24],
  ['reserved', 'ipv4', '192.0.2.0', 24],
  ['reserved', 'ipv4', '192.88.99.0', 24],
  ['private', 'ipv4', '192.168.0.0', 16],
  ['reserved', 'ipv4', '198.18.0.0', 15],
  ['reserved', 'ipv4', '198.51.100.0', 24],
  ['reserved', 'ipv4', '203.0.113.0', 24],
  ['multicast', 'ipv4', '224.0.0.0', 4],
  ['reserved', 'ipv4', '240.0.0.0', 4],
  ['unspecified', 'ipv6', '::', 128],
  ['loopback', 'ipv6', '::1', 128],
  ['private', 'ipv6', 'fc00::', 7],
  ['link-local', 'ipv6', 'fe80::', 10],
  ['reserved', 'ipv6', 'fec0::', 10],
  ['multicast', 'ipv6', 'ff00::', 8],
  ['reserved', 'ipv6', '64:ff9b:1::', 48],
  ['reserved', 'ipv6', '100::', 64],
  ['reserved', 'ipv6', '2001::', 23],
  ['reserved', 'ipv6', '2001:db8::', 32],
  // Documentation, like 2001:db8::/32 (RFC 9637).
  ['reserved', 'ipv6', '3fff::', 20],
];

const LISTS = new Map<BlockedCategory, BlockList>();
for (const [category, family, network, prefix] of RULES) {
  let list = LISTS.get(category);
  if (!list) LISTS.set(category, (list = new BlockList()));
  list.addSubnet(network, prefix, family);
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped, embedded dotted IPv4 expanded). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function ipv4FromGroups(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The IPv4 address an IPv6 address stands for, if any: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
 * (::a.b.c.d), NAT64 well-known prefix (64:ff9b::/96) and 6to4 (2002::/16). Each of them reaches
 * the IPv4 host, so it must pass the IPv4 rules.
 */
export function embeddedIPv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return ipv4FromGroups(g[6]!, g[7]!);
  if (zeros(0, 6) && (g[6] !== 0 || g[7]! > 1)) return ipv4FromGroups(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return ipv4FromGroups(g[6]!, g[7]!);
  if (g[0] === 0x2002) return ipv4FromGroups(g[1]!, g[2]!);
  return undefined;
}

function categoryOf(address: string, family: 'ipv4' | 'ipv6'): BlockedCategory | undefined {
  for (const [category, list] of LISTS) if (list.check(address, family)) return category;
  return undefined;
}

/**
 * Classifies an IP address for an outgoing connection (docs/reference.md §8, §10.1): `undefined` when a public host may be
 * contacted, else the category that forbids it. `allowPrivateHosts` opens loopback, private,
 * link-local and CGNAT ranges, never cloud metadata, multicast, unspecified or reserved addresses.
 */
export function blockedCategory(address: string, allowPrivateHosts: boolean): BlockedCategory | undefined {
  let category: BlockedCategory | undefined;
  if (isIPv4(address)) {
    category = categoryOf(address, 'ipv4');
  } else if (isIPv6(address)) {
    const ipv4 = embeddedIPv4(address);
    category = ipv4 === undefined ? categoryOf(address, 'ipv6') : categoryOf(ipv4, 'ipv4');
    // Only global unicast (2000::/3) and addresses standing for an IPv4 host are routable targets.
    const first = ipv6Groups(address)[0]!;
    if (!category && ipv4 === undefined && (first & 0xe000) !== 0x2000) category = 'reserved';
  } else {
    return 'reserved';
  }
  if (category && allowPrivateHosts && PRIVATE_CATEGORIES.has(category)) return undefined;
  // Connecting to 0.0.0.0 or :: reaches this host, as loopback does: a test server that says it
  // listens on 0.0.0.0 is served where loopback is. The rest of 0.0.0.0/8 reaches nothing.
  if (
    allowPrivateHosts &&
    (address === '0.0.0.0' || (isIPv6(address) && ipv6Groups(address).every((g) => g === 0)))
  ) {
    return undefined;
  }
  return category;
}
