/**
 * Deterministic mutations of valid documents: the same (seed, input) always gives the same bytes.
 * Generic ones (bit flips, truncation, byte runs) apply to anything; ZIP entry damage to
 * OOXML files and PDF xref damage to PDFs, where parsers trust structure the most.
 */
import { prng } from './bombs.ts';

export type Rng = () => number;
export type MutatorName = 'bitflip' | 'truncate' | 'byterun' | 'zip-entry' | 'pdf-xref';

const int = (rng: Rng, n: number) => Math.floor(rng() * n);

export function bitflip(src: Buffer, rng: Rng): { bytes: Buffer; note: string } {
  const out = Buffer.from(src);
  const flips = 1 + int(rng, 32);
  for (let i = 0; i < flips; i++) {
    const at = int(rng, out.length);
    out[at]! ^= 1 << int(rng, 8);
  }
  return { bytes: out, note: `${flips} bits` };
}

export function truncate(src: Buffer, rng: Rng): { bytes: Buffer; note: string } {
  // Mostly near the end (where trailers and central directories live), sometimes anywhere.
  const at = rng() < 0.5 ? src.length - 1 - int(rng, Math.min(src.length - 1, 4096)) : int(rng, src.length);
  return { bytes: src.subarray(0, at), note: `at ${at}/${src.length}` };
}

export function byterun(src: Buffer, rng: Rng): { bytes: Buffer; note: string } {
  const len = 1 + int(rng, rng() < 0.8 ? 256 : 64 * 1024);
  const value = [0x00, 0xff, 0x20, 0x7b, 0x5b, 0x3c][int(rng, 6)]!;
  const at = int(rng, src.length);
  const run = Buffer.alloc(len, value);
  const insert = rng() < 0.5;
  const bytes = insert ? Buffer.concat([src.subarray(0, at), run, src.subarray(at)]) : Buffer.concat([src.subarray(0, at), run, src.subarray(Math.min(src.length, at + len))]);
  return { bytes, note: `${insert ? 'insert' : 'overwrite'} ${len} x 0x${value.toString(16)} at ${at}` };
}

interface CentralEntry {
  /** Offset of the central directory record. */
  central: number;
  local: number;
  compressedSize: number;
  nameLength: number;
}

function centralDirectory(buf: Buffer): CentralEntry[] | null {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0 || eocd + 22 > buf.length) return null;
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const out: CentralEntry[] = [];
  for (let i = 0; i < count && at + 46 <= buf.length && buf.readUInt32LE(at) === 0x02014b50; i++) {
    const nameLength = buf.readUInt16LE(at + 28);
    out.push({ central: at, local: buf.readUInt32LE(at + 42), compressedSize: buf.readUInt32LE(at + 20), nameLength });
    at += 46 + nameLength + buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32);
  }
  return out.length ? out : null;
}

/** Damages one entry of a ZIP: its data, sizes, method, CRC, name length or local header. */
export function zipEntry(src: Buffer, rng: Rng): { bytes: Buffer; note: string } {
  const entries = centralDirectory(src);
  if (!entries) return bitflip(src, rng);
  const out = Buffer.from(src);
  const e = entries[int(rng, entries.length)]!;
  const kinds = ['data', 'compressed-size', 'uncompressed-size', 'method', 'crc', 'name-length', 'local-signature', 'local-offset'] as const;
  const kind = kinds[int(rng, kinds.length)]!;
  const huge = [0, 1, 0x7fffffff, 0xffffffff][int(rng, 4)]!;
  switch (kind) {
    case 'data': {
      const localName = out.readUInt16LE(e.local + 26) + out.readUInt16LE(e.local + 28);
      const start = e.local + 30 + localName;
      for (let i = 0; i < 8 && e.compressedSize > 0; i++) out[start + int(rng, e.compressedSize)] = int(rng, 256);
      break;
    }
    case 'compressed-size':
      out.writeUInt32LE(huge, e.central + 20);
      out.writeUInt32LE(huge, e.local + 18);
      break;
    case 'uncompressed-size':
      out.writeUInt32LE(huge, e.central + 24);
      out.writeUInt32LE(huge, e.local + 22);
      break;
    case 'method':
      out.writeUInt16LE([0, 12, 14, 99][int(rng, 4)]!, e.central + 10);
      break;
    case 'crc':
      out.writeUInt32LE(int(rng, 2 ** 32), e.central + 16);
      break;
    case 'name-length':
      out.writeUInt16LE(0xffff, e.central + 28);
      break;
    case 'local-signature':
      out.writeUInt32LE(0xdeadbeef, e.local);
      break;
    case 'local-offset':
      out.writeUInt32LE(int(rng, src.length * 2), e.central + 42);
      break;
  }
  return { bytes: out, note: `${kind} of entry at ${e.local}` };
}

/** Damages a PDF's cross-reference data: offsets, the startxref pointer, the table header, or the trailer. */
export function pdfXref(src: Buffer, rng: Rng): { bytes: Buffer; note: string } {
  const text = src.toString('latin1');
  const startxref = text.lastIndexOf('startxref');
  const xref = text.lastIndexOf('\nxref');
  const kinds = ['offsets', 'startxref', 'header', 'trailer-size', 'remove-table'] as const;
  const kind = kinds[int(rng, kinds.length)]!;
  let out = text;
  if (kind === 'startxref' && startxref >= 0) {
    const m = /startxref\s+(\d+)/.exec(text.slice(startxref));
    if (m) out = text.slice(0, startxref) + `startxref\n${[0, 1, 99999999, Number(m[1]) + 7][int(rng, 4)]}` + text.slice(startxref + m[0].length);
  } else if (kind === 'offsets' && xref >= 0) {
    // Rewrite a few 10-digit offsets in the table (same width, so nothing else moves).
    const end = startxref > xref ? startxref : text.length;
    const table = text.slice(xref, end).replace(/^(\d{10}) (\d{5}) n/gm, (all, _o, gen) => (rng() < 0.3 ? `${String(int(rng, src.length * 2)).padStart(10, '0')} ${gen} n` : all));
    out = text.slice(0, xref) + table + text.slice(end);
  } else if (kind === 'header' && xref >= 0) {
    out = text.slice(0, xref) + text.slice(xref).replace(/^xref\s+\d+ (\d+)/m, (_all, n) => `xref\n0 ${Number(n) * 1000}`);
  } else if (kind === 'trailer-size') {
    out = text.replace(/\/Size \d+/g, '/Size 2147483647');
  } else if (kind === 'remove-table' && xref >= 0) {
    out = text.slice(0, xref) + '\n' + text.slice(startxref > xref ? startxref : text.length);
  } else {
    return bitflip(src, rng);
  }
  return { bytes: Buffer.from(out, 'latin1'), note: kind };
}

const MUTATORS: Record<MutatorName, (src: Buffer, rng: Rng) => { bytes: Buffer; note: string }> = {
  bitflip,
  truncate,
  byterun,
  'zip-entry': zipEntry,
  'pdf-xref': pdfXref,
};

export const isZip = (b: Buffer) => b.length > 4 && b.readUInt32LE(0) === 0x04034b50;
export const isPdf = (b: Buffer) => b.subarray(0, 1024).includes('%PDF');

/** The mutators that make sense for these bytes. */
export function mutatorsFor(src: Buffer): MutatorName[] {
  const out: MutatorName[] = ['bitflip', 'truncate', 'byterun'];
  if (isZip(src)) out.push('zip-entry');
  if (isPdf(src)) out.push('pdf-xref');
  return out;
}

export interface Mutant {
  index: number;
  source: string;
  mutator: MutatorName;
  note: string;
  bytes: Buffer;
}

/**
 * `count` mutants of `sources`, round-robin over the sources; mutant i uses its own PRNG seeded
 * from (seed, i), so any single one can be rebuilt from the table without the others.
 */
export function* mutants(sources: { name: string; bytes: Buffer }[], seed: number, count: number): Generator<Mutant> {
  for (let i = 0; i < count; i++) {
    const src = sources[i % sources.length]!;
    const rng = prng((seed * 1_000_003 + i) >>> 0);
    const options = mutatorsFor(src.bytes);
    const mutator = options[int(rng, options.length)]!;
    const { bytes, note } = MUTATORS[mutator](src.bytes, rng);
    yield { index: i, source: src.name, mutator, note, bytes };
  }
}
