/**
 * A small reader of a PDF file's raw objects, for the one thing pdf.js cannot give cheaply: the
 * bytes of an image stream as they are in the file. pdf.js decodes every image of a page as soon
 * as its operators are listed (a 600-dpi Letter JPEG becomes ~100 MB of RGB plus copies); reading
 * the page dictionary, its content stream and the image's JPEG bytes here lets a scan page be
 * decoded straight to the OCR resolution instead. Objects are found by scanning for "N G obj"
 * (the last definition wins, as after incremental updates) and inside object streams; anything
 * this reader does not understand yields null and the caller uses pdf.js as before.
 */
import { inflateSync, constants as zlibConstants } from 'node:zlib';

export interface PdfRef {
  num: number;
  gen: number;
}
export interface PdfName {
  name: string;
}
export type PdfDict = Map<string, PdfValue>;
export type PdfValue = number | boolean | null | PdfName | PdfRef | PdfDict | PdfValue[] | { str: true };

export interface PdfRawStream {
  dict: PdfDict;
  /** Start and end of the stream data in the file. */
  start: number;
  end: number;
}

/** Longest stream this reader inflates (content streams, object streams). */
const MAX_INFLATED_BYTES = 16 * 1024 * 1024;
const MAX_DEPTH = 32;
/** Parsed objects RawPdf keeps (see RawPdf.memo). */
const MEMO_OBJECTS = 1024;
/** Inflated object stream data RawPdf keeps (see RawPdf.objStms). */
const OBJSTM_CACHE_BYTES = 8 * 1024 * 1024;
const LINE_BREAK = new Uint8Array([0x0a]);

const isWhite = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const isDelim = (c: number) => c === 0x28 || c === 0x29 || c === 0x3c || c === 0x3e || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || c === 0x2f || c === 0x25;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

export const isName = (v: PdfValue | undefined): v is PdfName => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && 'name' in v;
export const isRef = (v: PdfValue | undefined): v is PdfRef => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && 'num' in v;
export const isDict = (v: PdfValue | undefined): v is PdfDict => v instanceof Map;

/** A tokenizer/parser of PDF objects over a byte range (file bytes or an inflated stream). */
export class PdfObjectParser {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.length,
  ) {
    this.pos = start;
  }

  skipWhite(): void {
    const b = this.bytes;
    while (this.pos < this.end) {
      const c = b[this.pos]!;
      if (isWhite(c)) this.pos++;
      else if (c === 0x25) {
        while (this.pos < this.end && b[this.pos] !== 0x0a && b[this.pos] !== 0x0d) this.pos++;
      } else break;
    }
  }

  /** A bare word (operator, keyword or number text) at the position, without moving past delimiters. */
  word(): string {
    const b = this.bytes;
    const from = this.pos;
    while (this.pos < this.end && !isWhite(b[this.pos]!) && !isDelim(b[this.pos]!)) this.pos++;
    return latin1(b, from, this.pos);
  }

  /** The next object, or an operator as `{ op }`; null at the end. */
  next(depth = 0): PdfValue | { op: string } | undefined {
    this.skipWhite();
    if (this.pos >= this.end || depth > MAX_DEPTH) return undefined;
    const b = this.bytes;
    const c = b[this.pos]!;
    if (c === 0x2f) {
      this.pos++;
      const w = this.word();
      return { name: w.includes('#') ? w.replace(/#([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))) : w };
    }
    if (c === 0x3c && b[this.pos + 1] === 0x3c) {
      this.pos += 2;
      const dict: PdfDict = new Map();
      for (;;) {
        this.skipWhite();
        if (this.pos >= this.end) return undefined;
        if (b[this.pos] === 0x3e && b[this.pos + 1] === 0x3e) {
          this.pos += 2;
          return dict;
        }
        const key = this.next(depth + 1);
        if (!isName(key as PdfValue)) return undefined;
        const value = this.value(depth + 1);
        if (value === undefined) return undefined;
        dict.set((key as PdfName).name, value);
      }
    }
    if (c === 0x5b) {
      this.pos++;
      const arr: PdfValue[] = [];
      for (;;) {
        this.skipWhite();
        if (this.pos >= this.end) return undefined;
        if (b[this.pos] === 0x5d) {
          this.pos++;
          return arr;
        }
        const v = this.value(depth + 1);
        if (v === undefined) return undefined;
        arr.push(v);
      }
    }
    if (c === 0x28) {
      // Literal string: skipped (balanced parentheses, backslash escapes).
      let level = 0;
      for (; this.pos < this.end; this.pos++) {
        const ch = b[this.pos]!;
        if (ch === 0x5c) this.pos++;
        else if (ch === 0x28) level++;
        else if (ch === 0x29 && --level === 0) {
          this.pos++;
          return { str: true };
        }
      }
      return undefined;
    }
    if (c === 0x3c) {
      const close = indexOfByte(b, 0x3e, this.pos, this.end);
      if (close < 0) return undefined;
      this.pos = close + 1;
      return { str: true };
    }
    if (isDelim(c)) return undefined;
    const w = this.word();
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(w)) {
      const n = Number(w);
      // "num gen R" is a reference.
      if (/^\d+$/.test(w)) {
        const save = this.pos;
        this.skipWhite();
        const gen = this.word();
        if (/^\d+$/.test(gen)) {
          this.skipWhite();
          if (this.bytes[this.pos] === 0x52 && (this.pos + 1 >= this.end || isWhite(b[this.pos + 1]!) || isDelim(b[this.pos + 1]!))) {
            this.pos++;
            return { num: n, gen: Number(gen) };
          }
        }
        this.pos = save;
      }
      return n;
    }
    if (w === 'true') return true;
    if (w === 'false') return false;
    if (w === 'null') return null;
    return w ? { op: w } : undefined;
  }

  /** The next object; undefined when the next token is an operator or malformed. */
  value(depth = 0): PdfValue | undefined {
    const v = this.next(depth);
    return v !== undefined && typeof v === 'object' && v !== null && 'op' in v ? undefined : (v as PdfValue | undefined);
  }
}

/** The objects of one PDF file, read lazily. */
export class RawPdf {
  /** Object number -> offset of the object's value (just after "obj"), last definition in the file. */
  private readonly offsets = new Map<number, number>();
  /** Object number -> [object stream number, index] for compressed objects (read on first need). */
  private compressed: Map<number, { stream: number; index: number }> | null = null;
  /**
   * Object streams read (inflated, header parsed), oldest first, at most OBJSTM_CACHE_BYTES of
   * data: finding the compressed objects reads every one of them, and a page's dictionary, its
   * resources and its contents often sit in different ones (keeping only the last one read
   * inflated one again for most lookups of a 400-page file).
   */
  private readonly objStms = new Map<number, ObjectStream | null>();
  private objStmBytes = 0;

  constructor(readonly bytes: Buffer) {
    const obj = Buffer.from('obj');
    for (let at = bytes.indexOf(obj); at >= 0; at = bytes.indexOf(obj, at + 3)) {
      // "<num> <gen> obj", the keyword standing alone.
      const after = bytes[at + 3];
      if (after !== undefined && !isWhite(after) && !isDelim(after)) continue;
      let p = at - 1;
      if (p < 0 || !isWhite(bytes[p]!)) continue;
      while (p >= 0 && isWhite(bytes[p]!)) p--;
      const genEnd = p + 1;
      while (p >= 0 && isDigit(bytes[p]!)) p--;
      if (p + 1 === genEnd) continue;
      if (p < 0 || !isWhite(bytes[p]!)) continue;
      while (p >= 0 && isWhite(bytes[p]!)) p--;
      const numEnd = p + 1;
      while (p >= 0 && isDigit(bytes[p]!)) p--;
      if (p + 1 === numEnd || numEnd - (p + 1) > 9) continue;
      if (p >= 0 && !isWhite(bytes[p]!) && !isDelim(bytes[p]!)) continue;
      this.offsets.set(Number(latin1(bytes, p + 1, numEnd)), at + 3);
    }
  }

  /**
   * Values already parsed, by object number (shared: callers only read them). A page's /Parent
   * (a /Pages node listing every kid) was parsed again for every page that asked for an inherited
   * key: a third of the rule hint's time on a 400-page file. Bounded: emptied when full.
   */
  private readonly memo = new Map<number, PdfValue | undefined>();

  /** The value of object `ref` (a stream's dictionary for streams). */
  get(ref: PdfRef): PdfValue | undefined {
    if (this.memo.has(ref.num)) return this.memo.get(ref.num);
    const value = this.parse(ref);
    if (this.memo.size >= MEMO_OBJECTS) this.memo.clear();
    this.memo.set(ref.num, value);
    return value;
  }

  private parse(ref: PdfRef): PdfValue | undefined {
    const at = this.offsets.get(ref.num);
    if (at !== undefined) return new PdfObjectParser(this.bytes, at).value();
    const loc = this.compressedObjects().get(ref.num);
    if (!loc) return undefined;
    const stm = this.objectStream(loc.stream);
    const start = stm?.offsets[loc.index];
    return stm && start !== undefined ? new PdfObjectParser(stm.data, start).value() : undefined;
  }

  /** `key` of a page dictionary, or of the nearest /Pages node above it that has it (/Resources, /MediaBox...). */
  inherited(dict: PdfDict, key: string): PdfValue | undefined {
    let node: PdfValue | undefined = dict;
    for (let depth = 0; depth < MAX_DEPTH && isDict(node); depth++) {
      if (node.has(key)) return this.resolve(node.get(key));
      node = this.resolve(node.get('Parent'));
    }
    return undefined;
  }

  /**
   * A page's /Contents decoded: one stream or every part of an array, joined with a line break
   * between (an operator never spans two parts). Empty without contents; null when a part cannot
   * be read or decoded, or the whole is longer than `maxBytes`.
   */
  content(contents: PdfValue | undefined, maxBytes: number): Uint8Array | null {
    if (contents === undefined || contents === null) return new Uint8Array(0);
    const value = isRef(contents) ? this.resolve(contents) : contents;
    // A stream reference or an array of them (resolving a stream gives its dictionary).
    const refs = Array.isArray(value) ? value : [contents];
    const parts: Uint8Array[] = [];
    let total = 0;
    for (const r of refs) {
      if (!isRef(r)) return null;
      const data = this.decodedStream(r);
      if (!data) return null;
      total += data.length + 1;
      if (total > maxBytes) return null;
      parts.push(data, LINE_BREAK);
    }
    return Buffer.concat(parts);
  }

  /** `v` with references followed (a few levels). */
  resolve(v: PdfValue | undefined): PdfValue | undefined {
    for (let i = 0; i < 8 && isRef(v); i++) v = this.get(v);
    return isRef(v) ? undefined : v;
  }

  /** The stream object `ref`: its dictionary and where its data lies in the file. */
  stream(ref: PdfRef): PdfRawStream | null {
    const at = this.offsets.get(ref.num);
    if (at === undefined) return null;
    const parser = new PdfObjectParser(this.bytes, at);
    const dict = parser.value();
    if (!isDict(dict)) return null;
    parser.skipWhite();
    if (parser.word() !== 'stream') return null;
    let start = parser.pos;
    if (this.bytes[start] === 0x0d) start++;
    if (this.bytes[start] === 0x0a) start++;
    const length = this.resolve(dict.get('Length'));
    let end = typeof length === 'number' && length >= 0 ? start + length : -1;
    // A wrong /Length is common: trust it only when "endstream" follows.
    const tail = end >= 0 && end <= this.bytes.length ? latin1(this.bytes, end, Math.min(this.bytes.length, end + 12)) : '';
    if (!/^\s*endstream/.test(tail)) {
      end = this.bytes.indexOf('endstream', start, 'latin1');
      if (end < 0) return null;
      while (end > start && (this.bytes[end - 1] === 0x0a || this.bytes[end - 1] === 0x0d)) end--;
    }
    return { dict, start, end };
  }

  /** A stream's data, decoded when it is unfiltered or FlateDecode without a predictor; null otherwise. */
  decodedStream(ref: PdfRef): Uint8Array | null {
    const s = this.stream(ref);
    if (!s) return null;
    const raw = this.bytes.subarray(s.start, s.end);
    const filter = this.resolve(s.dict.get('Filter'));
    const filters = filter === undefined || filter === null ? [] : Array.isArray(filter) ? filter : [filter];
    if (filters.length === 0) return raw;
    if (filters.length !== 1 || !isName(filters[0]) || (filters[0].name !== 'FlateDecode' && filters[0].name !== 'Fl')) return null;
    const parms = this.resolve(s.dict.get('DecodeParms') ?? s.dict.get('DP'));
    if (isDict(parms) && typeof parms.get('Predictor') === 'number' && (parms.get('Predictor') as number) > 1) return null;
    try {
      return inflateSync(raw, { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: MAX_INFLATED_BYTES });
    } catch {
      return null;
    }
  }

  private compressedObjects(): Map<number, { stream: number; index: number }> {
    if (this.compressed) return this.compressed;
    this.compressed = new Map();
    // Only objects whose dictionary names /ObjStm are read: the object defined last before each mention.
    const byOffset = [...this.offsets].sort((a, b) => a[1] - b[1]);
    const candidates = new Set<number>();
    for (let at = this.bytes.indexOf('/ObjStm', 0, 'latin1'); at >= 0; at = this.bytes.indexOf('/ObjStm', at + 7, 'latin1')) {
      let lo = 0;
      let hi = byOffset.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (byOffset[mid]![1] <= at) lo = mid;
        else hi = mid - 1;
      }
      const entry = byOffset[lo];
      if (entry && entry[1] <= at && this.offsets.get(entry[0]) === entry[1]) candidates.add(entry[0]);
    }
    for (const num of candidates) {
      const s = this.stream({ num, gen: 0 });
      const type = s?.dict.get('Type');
      if (!s || !isName(type) || type.name !== 'ObjStm') continue;
      const header = this.objectStream(num);
      if (!header) continue;
      header.nums.forEach((n, index) => {
        if (!this.offsets.has(n)) this.compressed!.set(n, { stream: num, index });
      });
    }
    return this.compressed;
  }

  private objectStream(num: number): ObjectStream | null {
    if (this.objStms.has(num)) return this.objStms.get(num)!;
    const parsed = this.readObjectStream(num);
    const bytes = parsed ? parsed.data.length + parsed.nums.length * 16 : 0;
    for (const [old, stm] of this.objStms) {
      if (this.objStmBytes + bytes <= OBJSTM_CACHE_BYTES) break;
      this.objStms.delete(old);
      this.objStmBytes -= stm ? stm.data.length + stm.nums.length * 16 : 0;
    }
    this.objStms.set(num, parsed);
    this.objStmBytes += bytes;
    return parsed;
  }

  private readObjectStream(num: number): ObjectStream | null {
    let out: ObjectStream | null = null;
    const s = this.stream({ num, gen: 0 });
    const data = s ? this.decodedStream({ num, gen: 0 }) : null;
    const n = s?.dict.get('N');
    const first = s?.dict.get('First');
    if (data && typeof n === 'number' && typeof first === 'number' && n >= 0 && n < 1_000_000) {
      const p = new PdfObjectParser(data, 0, Math.min(first, data.length));
      const nums: number[] = [];
      const offsets: number[] = [];
      for (let i = 0; i < n; i++) {
        const a = p.value();
        const b = p.value();
        if (typeof a !== 'number' || typeof b !== 'number') break;
        nums.push(a);
        offsets.push(first + b);
      }
      out = { data, offsets, nums };
    }
    return out;
  }
}

interface ObjectStream {
  data: Uint8Array;
  offsets: number[];
  nums: number[];
}

function indexOfByte(b: Uint8Array, byte: number, from: number, end: number): number {
  for (let i = from; i < end; i++) if (b[i] === byte) return i;
  return -1;
}

function latin1(b: Uint8Array, from: number, to: number): string {
  // Most are tokens of a few bytes: a Buffer view and a decode per token cost more than the loop.
  if (to - from <= 16) {
    let s = '';
    for (let i = from; i < to; i++) s += String.fromCharCode(b[i]!);
    return s;
  }
  return Buffer.from(b.buffer, b.byteOffset + from, to - from).toString('latin1');
}
