/**
 * The misbehaving-origin rows: process_document fetches from the loopback origin. A broken origin
 * is a 502 DOWNLOAD_ERROR, one that never finishes a 504 TIMEOUT at REQUEST_TIMEOUT (the runner
 * gives this server a short one), an oversized or bomb body a 413; slow but finite origins succeed.
 */
import { brotliZeros, gzipZeros } from './bombs.ts';
import { json, processedFlags, type Case } from './cases.ts';
import { zlibZeros } from './compressed-zeros.ts';
import type { Origin } from './origin.ts';

const G = 'origin';
const BROKEN = ['DOWNLOAD_ERROR'];
const ENDLESS = ['DOWNLOAD_ERROR', 'TIMEOUT'];

export function originCases(origin: Origin): Case[] {
  const fetchCase = (input: string, path: string, opts: Partial<Case> = {}): Case => ({
    group: G,
    input,
    bytes: null,
    check200: processedFlags,
    request: () => json('/v1/documents/process', { document_url: origin.url(path) }),
    ...opts,
  });
  const bomb = (input: string, name: string, encoding: string, make: () => Buffer | Promise<Buffer>): Case => {
    let size = 0;
    return {
      group: G,
      input,
      get bytes() {
        return size;
      },
      request: async () => {
        const bytes = await make();
        size = bytes.byteLength;
        return json('/v1/documents/process', { document_url: origin.add(name, { bytes, contentType: 'text/plain', encoding }) });
      },
    };
  };
  return [
    fetchCase('slow headers (3 s), then a document', '/slow-headers?n=3000', { legit: true }),
    fetchCase('headers never sent', '/stall', { allow5xx: ENDLESS }),
    fetchCase('slow body (64 B / 50 ms, 3 s)', '/slow-body', { legit: true }),
    fetchCase('body dripping for ever (1 B / 500 ms)', '/drip', { allow5xx: ENDLESS }),
    fetchCase('connection reset before headers', '/reset', { allow5xx: BROKEN }),
    fetchCase('connection reset mid-body', '/reset-mid-body', { allow5xx: BROKEN }),
    fetchCase('Content-Length twice the body', '/short-length', { allow5xx: BROKEN }),
    fetchCase('Content-Length 100, longer body', '/long-length', { legit: true, allow5xx: BROKEN }),
    fetchCase('Content-Length 1 TB', '/huge-length', { allow5xx: BROKEN }),
    fetchCase('non-HTTP garbage answer', '/garbage', { allow5xx: BROKEN }),
    fetchCase('redirect chain of 3', '/redirect?n=3', { legit: true }),
    fetchCase('redirect chain of 20', '/redirect?n=20', { allow5xx: BROKEN }),
    fetchCase('redirect loop', '/redirect-loop', { allow5xx: BROKEN }),
    fetchCase('HTTP 500 every time', '/status?n=500', { allow5xx: BROKEN }),
    bomb('Content-Encoding gzip bomb (1 GiB)', 'bomb-gzip.txt', 'gzip', () => gzipZeros(1024)),
    bomb('Content-Encoding deflate bomb (1 GiB)', 'bomb-deflate.txt', 'deflate', () => zlibZeros(1024)),
    bomb('Content-Encoding br bomb (512 MiB)', 'bomb-br.txt', 'br', () => brotliZeros(512)),
  ];
}
