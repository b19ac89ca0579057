/**
 * Pure address classification for the SSRF guard. Every address a hostname resolves to passes
 * through classifyAddress at connection time; IP literals in URLs are checked before any request.
 * IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) are judged by
 * the embedded address, so `::ffff:127.0.0.1` is as local as `127.0.0.1`.
 */
import { isIP } from 'node:net';

export type AddressCategory =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'unique-local'
  | 'invalid';

export interface AddressClass {
  /** The address as checked (IPv6 without brackets or zone). */
  address: string;
  category: AddressCategory;
  /** Human-readable range name, e.g. "10.0.0.0/8 (RFC 1918 private)". */
  range?: string;
  /** For IPv6 forms that embed an IPv4 address, the address that decided. */
  embeddedIpv4?: string;
}

interface V4Range {
  base: number;
  bits: number;
  category: AddressCategory;
  name: string;
}

const v4 = (cidr: string, category: AddressCategory, name: string): V4Range => {
  const [ip, bits] = cidr.split('/');
  return { base: parseIpv4(ip!)!, bits: Number(bits), category, name: `${cidr} (${name})` };
};

/** Checked in order; the first match wins (broadcast before the enclosing 240/4). */
const IPV4_DENIED: readonly V4Range[] = [
  v4('255.255.255.255/32', 'broadcast', 'limited broadcast'),
  v4('0.0.0.0/8', 'unspecified', '"this network"'),
  v4('10.0.0.0/8', 'private', 'RFC 1918 private'),
  v4('100.64.0.0/10', 'shared', 'carrier-grade NAT'),
  v4('127.0.0.0/8', 'loopback', 'loopback'),
  v4('169.254.0.0/16', 'link-local', 'link-local, cloud metadata'),
  v4('172.16.0.0/12', 'private', 'RFC 1918 private'),
  v4('192.0.0.0/24', 'reserved', 'IETF protocol assignments'),
  v4('192.0.2.0/24', 'reserved', 'documentation'),
  v4('192.88.99.0/24', 'reserved', '6to4 relay anycast'),
  v4('192.168.0.0/16', 'private', 'RFC 1918 private'),
  v4('198.18.0.0/15', 'reserved', 'benchmarking'),
  v4('198.51.100.0/24', 'reserved', 'documentation'),
  v4('203.0.113.0/24', 'reserved', 'documentation'),
  v4('224.0.0.0/4', 'multicast', 'multicast'),
  v4('240.0.0.0/4', 'reserved', 'reserved'),
];

/** Dotted-quad to unsigned 32-bit integer; null when not exactly four decimal octets. */
export function parseIpv4(ip: string): number | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const o = Number(p);
    if (o > 255) return null;
    n = n * 256 + o;
  }
  return n;
}

export function formatIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** IPv6 text (no brackets, optional %zone, optional dotted IPv4 tail) to 8 16-bit groups. */
export function parseIpv6(input: string): number[] | null {
  let ip = input.trim();
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  const zone = ip.indexOf('%');
  if (zone >= 0) ip = ip.slice(0, zone);
  if (isIP(ip) !== 6) return null;
  const lastColon = ip.lastIndexOf(':');
  const last = ip.slice(lastColon + 1);
  if (last.includes('.')) {
    // Rewrite a dotted IPv4 tail as two hex groups so one parser handles both forms.
    const n = parseIpv4(last);
    if (n === null) return null;
    ip = `${ip.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = ip.split('::');
  if (halves.length > 2) return null;
  const toGroups = (s: string) => (s === '' ? [] : s.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)));
  const head = toGroups(halves[0]!);
  const rest = halves.length === 2 ? toGroups(halves[1]!) : [];
  let groups: number[];
  if (halves.length === 2) {
    const fill = 8 - head.length - rest.length;
    if (fill < 0) return null;
    groups = [...head, ...new Array<number>(fill).fill(0), ...rest];
  } else {
    groups = head;
  }
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g))) return null;
  return groups;
}

function classifyIpv4(n: number, address: string): AddressClass {
  for (const r of IPV4_DENIED) {
    const mask = r.bits === 0 ? 0 : (0xffffffff << (32 - r.bits)) >>> 0;
    if (((n & mask) >>> 0) === ((r.base & mask) >>> 0)) return { address, category: r.category, range: r.name };
  }
  return { address, category: 'public' };
}

const hasPrefix = (g: number[], prefix: number[], bits: number): boolean => {
  // Compare the first `bits` bits of the 128-bit address.
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const take = Math.min(16, bits);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if ((g[i]! & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
};

const v4From = (hi: number, lo: number) => ((hi << 16) >>> 0) + lo;

function embedded(address: string, v4n: number, form: string): AddressClass {
  const inner = classifyIpv4(v4n, formatIpv4(v4n));
  if (inner.category === 'public') return { address, category: 'public', embeddedIpv4: inner.address };
  return { address, category: inner.category, range: `${form} of ${inner.range}`, embeddedIpv4: inner.address };
}

function classifyIpv6(g: number[], address: string): AddressClass {
  const zeroUntil = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (g.every((x) => x === 0)) return { address, category: 'unspecified', range: ':: (unspecified)' };
  if (zeroUntil(7) && g[7] === 1) return { address, category: 'loopback', range: '::1 (loopback)' };
  if (zeroUntil(5) && g[5] === 0xffff) return embedded(address, v4From(g[6]!, g[7]!), '::ffff:0:0/96 IPv4-mapped form');
  // ::ffff:0:a.b.c.d (SIIT IPv4-translated) and ::a.b.c.d (deprecated IPv4-compatible).
  if (zeroUntil(4) && g[4] === 0xffff && g[5] === 0) return embedded(address, v4From(g[6]!, g[7]!), '::ffff:0:0:0/96 IPv4-translated form');
  if (zeroUntil(6)) return embedded(address, v4From(g[6]!, g[7]!), '::/96 IPv4-compatible form');
  if (hasPrefix(g, [0x64, 0xff9b], 96)) return embedded(address, v4From(g[6]!, g[7]!), '64:ff9b::/96 NAT64 form');
  if (hasPrefix(g, [0x64, 0xff9b, 0x1], 48)) return { address, category: 'reserved', range: '64:ff9b:1::/48 (local-use NAT64)' };
  if (hasPrefix(g, [0x2002], 16)) return embedded(address, v4From(g[1]!, g[2]!), '2002::/16 6to4 form');
  if (hasPrefix(g, [0x2001, 0x0000], 32)) {
    // Teredo: the client's IPv4 address is stored inverted in the last 32 bits.
    return embedded(address, (v4From(g[6]!, g[7]!) ^ 0xffffffff) >>> 0, '2001::/32 Teredo form');
  }
  if (hasPrefix(g, [0x100], 64)) return { address, category: 'reserved', range: '100::/64 (discard-only)' };
  if (hasPrefix(g, [0x2001, 0x0db8], 32)) return { address, category: 'reserved', range: '2001:db8::/32 (documentation)' };
  if (hasPrefix(g, [0xfc00], 7)) return { address, category: 'unique-local', range: 'fc00::/7 (unique local)' };
  if (hasPrefix(g, [0xfe80], 10)) return { address, category: 'link-local', range: 'fe80::/10 (link-local)' };
  if (hasPrefix(g, [0xfec0], 10)) return { address, category: 'reserved', range: 'fec0::/10 (site-local, deprecated)' };
  if (hasPrefix(g, [0xff00], 8)) return { address, category: 'multicast', range: 'ff00::/8 (multicast)' };
  return { address, category: 'public' };
}

/** Classifies an IPv4 or IPv6 address (brackets and zone ids tolerated). Anything else: 'invalid'. */
export function classifyAddress(input: string): AddressClass {
  const raw = input.trim().replace(/^\[(.*)\]$/, '$1');
  const n = parseIpv4(raw);
  if (n !== null) return classifyIpv4(n, raw);
  const g = parseIpv6(raw);
  if (g !== null) return classifyIpv6(g, raw.replace(/%.*$/, ''));
  return { address: raw, category: 'invalid', range: 'not an IP address' };
}

export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).category === 'public';
}

/** One entry of ALLOWED_HOSTS: a hostname or IP with an optional port. */
export interface AllowedHost {
  host: string;
  port?: number;
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** A DNS name (letters, digits, `-`, `_`; labels up to 63 characters) or an IPv4 address. */
function isHostName(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const labels = host.split('.');
  // All-numeric names are IPv4 addresses or nothing ("999.1.1.1", "1.2.3").
  if (labels.every((l) => /^\d+$/.test(l))) return parseIpv4(host) !== null;
  return labels.every((l) => LABEL.test(l));
}

/**
 * Why an ALLOWED_HOSTS entry is not one this server understands, or null when it is. Accepted:
 * "host", "host:port", an IPv4 address with or without a port, "[v6]", "[v6]:port" and a bare
 * IPv6 address. Ranges and wildcards are not supported: ALLOW_PRIVATE_NETWORKS opens them all.
 */
export function allowedHostProblem(entry: string): string | null {
  const e = entry.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(e)) return 'is a URL; write only host or host:port (e.g. 127.0.0.1:8080)';
  if (e.includes('/')) return 'is a range; CIDR ranges are not supported: list each host[:port], or set ALLOW_PRIVATE_NETWORKS=true';
  if (e.includes('*')) return 'has a wildcard; wildcards are not supported: list each host[:port], or set ALLOW_PRIVATE_NETWORKS=true';
  const port = /:(\d+)$/.exec(e)?.[1];
  if (port !== undefined && isIP(e) !== 6 && (Number(port) < 1 || Number(port) > 65535)) return 'has a port outside 1-65535';
  if (parseAllowedHost(e) === null) return 'is not a host name, IP address, host:port or [IPv6]:port';
  return null;
}

/** Parses "host", "host:port", "[v6]", "[v6]:port" (and a bare IPv6 address); null for anything else. */
export function parseAllowedHost(entry: string): AllowedHost | null {
  const e = entry.trim().toLowerCase();
  if (!e) return null;
  let host: string;
  let port: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(e);
  if (bracket) {
    host = bracket[1]!;
    port = bracket[2];
  } else if (isIP(e) === 6) {
    host = e;
  } else {
    const m = /^([^:]+)(?::(\d+))?$/.exec(e);
    if (!m) return null;
    host = m[1]!;
    port = m[2];
  }
  if (bracket ? isIP(host) !== 6 : isIP(host) === 0 && !isHostName(host.replace(/\.$/, ''))) return null;
  host = normaliseHost(host);
  if (port === undefined) return { host };
  const p = Number(port);
  return p >= 1 && p <= 65535 ? { host, port: p } : null;
}

/** Lower-case, brackets and trailing dot removed, IPv6 in canonical compressed form. */
export function normaliseHost(host: string): string {
  let h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (isIP(h) === 6) {
    try {
      h = new URL(`http://[${h}]/`).hostname.slice(1, -1);
    } catch {
      /* keep as is */
    }
  }
  return h;
}

export interface AddressPolicyOptions {
  allowPrivateNetworks: boolean;
  /** ALLOWED_HOSTS entries as written (host[:port]). */
  allowedHosts: readonly string[];
}

/**
 * The SSRF decision for one configuration. Immutable: built once per service.
 * - hostAllowed(host, port): the host:port is an explicit ALLOWED_HOSTS opt-in (no address check).
 * - addressDenial(ip): null when the address may be contacted, else the reason.
 */
export interface AddressPolicy {
  readonly allowPrivateNetworks: boolean;
  readonly allowedHosts: readonly AllowedHost[];
  hostAllowed(host: string, port: number): boolean;
  addressDenial(address: string): string | null;
}

export function createAddressPolicy(opts: AddressPolicyOptions): AddressPolicy {
  const allowedHosts = Object.freeze(
    opts.allowedHosts.map(parseAllowedHost).filter((h): h is AllowedHost => h !== null),
  );
  return Object.freeze({
    allowPrivateNetworks: opts.allowPrivateNetworks,
    allowedHosts,
    hostAllowed(host: string, port: number): boolean {
      const h = normaliseHost(host);
      return allowedHosts.some((a) => a.host === h && (a.port === undefined || a.port === port));
    },
    addressDenial(address: string): string | null {
      const c = classifyAddress(address);
      if (c.category === 'invalid') return `"${address}" is not a valid IP address`;
      if (c.category === 'public' || opts.allowPrivateNetworks) return null;
      return `${c.address} is a ${c.category} address in ${c.range}`;
    },
  });
}
