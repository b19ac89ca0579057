/**
 * URL rules applied to the requested URL and to every redirect target: http(s) only, no userinfo,
 * at most 2,048 characters, and IP-literal hosts judged by the address policy right away (a
 * connection to an IP literal never goes through DNS, so the connect-time lookup cannot see it).
 */
import { isIP } from 'node:net';
import { toolError } from '../errors.ts';
import { normaliseHost, type AddressPolicy } from './address-policy.ts';

export const MAX_URL_LENGTH = 2048;

/** Parses and checks a URL's form. Throws VALIDATION_ERROR (unparsable) or URL_NOT_ALLOWED. */
export function parseDocumentUrl(raw: string): URL {
  if (typeof raw !== 'string' || raw.trim() === '') throw toolError('VALIDATION_ERROR', 'A document URL is required');
  const text = raw.trim();
  if (text.length > MAX_URL_LENGTH) {
    throw toolError('URL_NOT_ALLOWED', `URL not allowed: longer than ${MAX_URL_LENGTH} characters (${text.length})`);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw toolError('VALIDATION_ERROR', `Not a valid absolute URL: ${text.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw toolError('URL_NOT_ALLOWED', `URL not allowed: scheme "${url.protocol.replace(/:$/, '')}" (only http and https)`);
  }
  if (url.username !== '' || url.password !== '') {
    throw toolError('URL_NOT_ALLOWED', 'URL not allowed: credentials in the URL (user:password@) are refused');
  }
  if (url.hostname === '') throw toolError('VALIDATION_ERROR', 'URL has no host');
  if (url.href.length > MAX_URL_LENGTH) {
    throw toolError('URL_NOT_ALLOWED', `URL not allowed: longer than ${MAX_URL_LENGTH} characters once normalised`);
  }
  return url;
}

export function effectivePort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** The host without brackets or trailing dot, lower-case. */
export function urlHost(url: URL): string {
  return normaliseHost(url.hostname);
}

/**
 * True when this URL's host:port is an explicit ALLOWED_HOSTS opt-in or private networks are
 * allowed — then its connections skip the address check.
 */
export function bypassesAddressCheck(url: URL, policy: AddressPolicy): boolean {
  return policy.allowPrivateNetworks || policy.hostAllowed(urlHost(url), effectivePort(url));
}

/**
 * The end of a refusal for a private or loopback address: the ALLOWED_HOSTS entry that would let
 * this URL's host and port through, so a user serving files on their own machine knows the fix.
 */
export function allowedHostsHint(url: URL): string {
  const host = urlHost(url);
  const entry = `${isIP(host) === 6 ? `[${host}]` : host}:${effectivePort(url)}`;
  return `; to allow it, start the server with ALLOWED_HOSTS=${entry} (or ALLOW_PRIVATE_NETWORKS=true for every private address)`;
}

/**
 * Full pre-connection check of one hop: form rules plus, for IP-literal hosts, the address rule.
 * Hostnames are checked later, at connection time, on every address they resolve to.
 */
export function checkRequestUrl(raw: string, policy: AddressPolicy): URL {
  const url = parseDocumentUrl(raw);
  if (bypassesAddressCheck(url, policy)) return url;
  const host = urlHost(url);
  if (isIP(host) !== 0) {
    const denial = policy.addressDenial(host);
    if (denial) throw toolError('URL_NOT_ALLOWED', `URL not allowed: ${denial}${allowedHostsHint(url)}`);
  }
  return url;
}
