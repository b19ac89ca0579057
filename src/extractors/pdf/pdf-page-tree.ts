/**
 * Rebalances flat PDF page trees before pdf.js opens the bytes. pdf.js finds a page by pushing
 * every kid of each node on its path onto a stack, so a file whose pages all hang under one
 * /Kids array costs pages x kids to read (100,000 pages under one node ran past the 300 s
 * document timeout). A node with more than MAX_FLAT_KIDS kids gets intermediate /Pages nodes of at
 * most FANOUT kids each, written as an incremental update: the new nodes, the node rewritten with
 * the new /Kids, and a cross-reference section whose /Prev is the file's last one. A lookup then
 * costs about FANOUT per level.
 *
 * The kids keep their /Parent: what they inherit (MediaBox, Resources, Rotate, CropBox) stays on
 * the rewritten node, which is where a kid's /Parent still leads; the new nodes carry nothing to
 * inherit. Classic xref tables, xref streams and objects in object streams are read; whatever this
 * does not understand (other filters, damaged cross-references, direct kids) leaves the file as it
 * is. Work is bounded: one pass over the cross-references, each page-tree node parsed once, capped
 * object fetches and inflated bytes.
 */
import { inflateSync, constants as zlibConstants } from 'node:zlib';

/** A /Kids array longer than this is split. */
export const MAX_FLAT_KIDS = 256;
/** Kids per new intermediate node (and at most this many under the rewritten node). */
export const FANOUT = 64;
/** Objects fetched while walking the tree at most; beyond it the file is left as it is. */
const MAX_FETCHES = 1_000_000;
/** Bytes of objects parsed while walking the tree at most. */
const MAX_PARSED = 512 * 1024 * 1024;
/** Bytes inflated from object and xref streams at most, over the whole walk. */
const MAX_INFLATED = 512 * 1024 * 1024;
/** Decoded object streams kept at once. */
const MAX_CACHED_STREAM_BYTES = 64 * 1024 * 1024;
const MAX_XREF_SECTIONS = 1_000;
const MAX_OBJECT_NUMBER = 8_388_607;
const MAX_NESTING = 64;

/** Thrown for anything this reader does not follow: the file is then left untouched. */
class Unreadable extends Error {}

class Name {
  constructor(readonly name: string) {}
}
class Ref {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}
class Keyword {
  constructor(readonly word: string) {}
}
class Str {}
type Val = number | boolean | null | Name | Ref | Keyword | Str | Val[] | Dict;

interface DictEntry {
  val: Val;
  /** Offsets in `src` of the key's slash and of the end of its value: the entry's raw bytes. */
  start: number;
  end: number;
}
class Dict {
  readonly entries = new Map<string, DictEntry>();
  constructor(readonly src: Uint8Array) {}
  get(key: string): Val | undefined {
    return this.entries.get(key)?.val;
  }
}

interface ParsedObject {
  val: Val;
  /** Where the parse stopped. */
  end: number;
  /** For a stream object: where its data starts in the file. */
  streamStart?: number;
}

type XrefEntry = { kind: 1; offset: number; gen: number } | { kind: 2; stream: number; index: number };

const isWhite = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const isDelim = (c: number) =>
  c === 0x28 || c === 0x29 || c === 0x3c || c === 0x3e || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || c === 0x2f || c === 0x25;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isName = (v: Val | undefined, name: string) => v instanceof Name && v.name === name;
const isCount = (v: Val | undefined): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** A PDF object parser over one buffer (the file, or a decoded object stream). */
class Parser {
  pos: number;
  constructor(
    readonly src: Uint8Array,
    pos = 0,
  ) {
    this.pos = pos;
  }

  skipWhite(): void {
    const s = this.src;
    while (this.pos < s.length) {
      const c = s[this.pos];
      if (isWhite(c)) this.pos++;
      else if (c === 0x25) {
        while (this.pos < s.length && s[this.pos] !== 0x0a && s[this.pos] !== 0x0d) this.pos++;
      } else break;
    }
  }

  private regularRun(): string {
    const s = this.src;
    const start = this.pos;
    while (this.pos < s.length && !isWhite(s[this.pos]) && !isDelim(s[this.pos])) this.pos++;
    return latin1(s, start, this.pos);
  }

  /** An unsigned integer at the current position, or null (position unchanged). */
  private unsignedInt(): number | null {
    const s = this.src;
    let p = this.pos;
    let n = 0;
    while (p < s.length && isDigit(s[p])) n = n * 10 + (s[p++] - 0x30);
    if (p === this.pos || p - this.pos > 15) return null;
    if (p < s.length && !isWhite(s[p]) && !isDelim(s[p])) return null;
    this.pos = p;
    return n;
  }

  keyword(): string {
    this.skipWhite();
    return this.regularRun();
  }

  value(depth = 0): Val {
    if (depth > MAX_NESTING) throw new Unreadable('nesting');
    this.skipWhite();
    const s = this.src;
    if (this.pos >= s.length) throw new Unreadable('end of data');
    const c = s[this.pos];
    if (c === 0x2f) return this.name();
    if (c === 0x3c && s[this.pos + 1] === 0x3c) return this.dict(depth);
    if (c === 0x3c) {
      const end = s.indexOf(0x3e, this.pos);
      if (end < 0) throw new Unreadable('hex string');
      this.pos = end + 1;
      return new Str();
    }
    if (c === 0x28) return this.literalString();
    if (c === 0x5b) {
      this.pos++;
      const items: Val[] = [];
      for (;;) {
        this.skipWhite();
        if (this.pos >= s.length) throw new Unreadable('array');
        if (s[this.pos] === 0x5d) {
          this.pos++;
          return items;
        }
        items.push(this.value(depth + 1));
      }
    }
    if (isDigit(c)) {
      const n = this.unsignedInt();
      if (n !== null) {
        // `num gen R` is a reference; anything else leaves the integer alone.
        const after = this.pos;
        this.skipWhite();
        const gen = this.unsignedInt();
        if (gen !== null) {
          this.skipWhite();
          if (s[this.pos] === 0x52 && (this.pos + 1 >= s.length || isWhite(s[this.pos + 1]) || isDelim(s[this.pos + 1]))) {
            this.pos++;
            return new Ref(n, gen);
          }
        }
        this.pos = after;
        return n;
      }
    }
    if (isDigit(c) || c === 0x2b || c === 0x2d || c === 0x2e) {
      const word = this.regularRun();
      const n = Number(word);
      return Number.isFinite(n) ? n : 0;
    }
    if (isDelim(c)) throw new Unreadable(`unexpected ${String.fromCharCode(c)}`);
    const word = this.regularRun();
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    return new Keyword(word);
  }

  private name(): Name {
    this.pos++;
    const raw = this.regularRun();
    return new Name(raw.includes('#') ? raw.replace(/#([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))) : raw);
  }

  private dict(depth: number): Dict {
    const s = this.src;
    this.pos += 2;
    const d = new Dict(s);
    for (;;) {
      this.skipWhite();
      if (this.pos >= s.length) throw new Unreadable('dictionary');
      if (s[this.pos] === 0x3e && s[this.pos + 1] === 0x3e) {
        this.pos += 2;
        return d;
      }
      if (s[this.pos] !== 0x2f) throw new Unreadable('dictionary key');
      const start = this.pos;
      const key = this.name().name;
      const val = this.value(depth + 1);
      d.entries.set(key, { val, start, end: this.pos });
    }
  }

  private literalString(): Str {
    const s = this.src;
    let level = 0;
    for (; this.pos < s.length; this.pos++) {
      const c = s[this.pos];
      if (c === 0x5c) this.pos++;
      else if (c === 0x28) level++;
      else if (c === 0x29 && --level === 0) {
        this.pos++;
        return new Str();
      }
    }
    throw new Unreadable('string');
  }
}

function latin1(s: Uint8Array, start: number, end: number): string {
  if (end - start <= 16) {
    let out = '';
    for (let i = start; i < end; i++) out += String.fromCharCode(s[i]);
    return out;
  }
  return Buffer.from(s.buffer, s.byteOffset + start, end - start).toString('latin1');
}

/** The file's objects, read through its cross-reference sections. */
class PdfObjects {
  readonly entries = new Map<number, XrefEntry>();
  trailer: Dict | null = null;
  startxref = -1;
  fetches = 0;
  /** Bytes parsed by fetches: object-stream offsets may all point at one large object. */
  private parsed = 0;
  private inflated = 0;
  private readonly streams = new Map<number, { data: Uint8Array; nums: number[]; offsets: number[]; first: number }>();
  private streamBytes = 0;

  constructor(readonly src: Buffer) {}

  readXref(): void {
    const tail = this.src.lastIndexOf('startxref', this.src.length - 1, 'latin1');
    if (tail < 0 || tail < this.src.length - 4096) throw new Unreadable('no startxref');
    const p = new Parser(this.src, tail + 'startxref'.length);
    const start = p.value();
    if (!isCount(start)) throw new Unreadable('startxref');
    this.startxref = start;
    const queue = [start];
    const seen = new Set<number>();
    while (queue.length) {
      const at = queue.shift()!;
      if (seen.has(at)) continue;
      if (at >= this.src.length) throw new Unreadable('xref offset');
      seen.add(at);
      if (seen.size > MAX_XREF_SECTIONS) throw new Unreadable('xref sections');
      const parser = new Parser(this.src, at);
      parser.skipWhite();
      const isTable = latin1(this.src, parser.pos, Math.min(parser.pos + 4, this.src.length)) === 'xref';
      const dict = isTable ? this.readTable(parser) : this.readStream(at);
      this.trailer ??= dict;
      const xrefStm = dict.get('XRefStm');
      if (isCount(xrefStm)) queue.push(xrefStm);
      const prev = dict.get('Prev');
      if (isCount(prev)) queue.push(prev);
    }
    if (!this.trailer) throw new Unreadable('no trailer');
  }

  private set(num: number, entry: XrefEntry): void {
    if (num > MAX_OBJECT_NUMBER) throw new Unreadable('object number');
    if (!this.entries.has(num)) this.entries.set(num, entry);
  }

  private readTable(p: Parser): Dict {
    p.pos += 4;
    for (;;) {
      p.skipWhite();
      if (latin1(this.src, p.pos, Math.min(p.pos + 7, this.src.length)) === 'trailer') {
        p.pos += 7;
        const dict = p.value();
        if (!(dict instanceof Dict)) throw new Unreadable('trailer');
        return dict;
      }
      const first = p.value();
      const count = p.value();
      if (!isCount(first) || !isCount(count) || first + count > MAX_OBJECT_NUMBER + 1) throw new Unreadable('xref subsection');
      for (let i = 0; i < count; i++) {
        const offset = p.value();
        const gen = p.value();
        const kind = p.keyword();
        if (!isCount(offset) || !isCount(gen) || (kind !== 'n' && kind !== 'f')) throw new Unreadable('xref entry');
        // A free entry defines nothing: an older section (or a hybrid file's xref stream) may.
        if (kind === 'n') this.set(first + i, { kind: 1, offset, gen });
      }
    }
  }

  private readStream(at: number): Dict {
    const obj = this.parseAt(this.src, at, null);
    const dict = obj.val;
    if (!(dict instanceof Dict) || obj.streamStart === undefined || !isName(dict.get('Type'), 'XRef')) throw new Unreadable('xref stream');
    const data = this.streamData(dict, obj.streamStart);
    const w = dict.get('W');
    if (!Array.isArray(w) || w.length < 3 || !w.every(isCount) || w.some((x) => (x as number) > 8)) throw new Unreadable('xref /W');
    const [w0, w1, w2] = w as number[];
    const rowLen = w0 + w1 + w2;
    const size = dict.get('Size');
    const index = dict.get('Index') ?? (isCount(size) ? [0, size] : null);
    if (!Array.isArray(index) || index.length % 2 || !index.every(isCount) || rowLen === 0) throw new Unreadable('xref /Index');
    let row = 0;
    const field = (off: number, width: number) => {
      let v = 0;
      for (let i = 0; i < width; i++) v = v * 256 + data[off + i];
      return v;
    };
    for (let k = 0; k < index.length; k += 2) {
      const first = index[k] as number;
      const count = index[k + 1] as number;
      for (let i = 0; i < count; i++, row++) {
        const off = row * rowLen;
        if (off + rowLen > data.length) return dict;
        const type = w0 ? field(off, w0) : 1;
        const a = field(off + w0, w1);
        const b = field(off + w0 + w1, w2);
        if (type === 1) this.set(first + i, { kind: 1, offset: a, gen: b });
        else if (type === 2) this.set(first + i, { kind: 2, stream: a, index: b });
      }
    }
    return dict;
  }

  /** `num gen obj <value> [stream]` at `at` in `src`; `expect` checks the object number. */
  private parseAt(src: Uint8Array, at: number, expect: Ref | null): ParsedObject {
    const p = new Parser(src, at);
    const num = p.value();
    const gen = p.value();
    if (!isCount(num) || !isCount(gen) || p.keyword() !== 'obj') throw new Unreadable('object header');
    if (expect && (num !== expect.num || gen !== expect.gen)) throw new Unreadable('object number');
    const val = p.value();
    if (!(val instanceof Dict)) return { val, end: p.pos };
    const before = p.pos;
    if (p.keyword() !== 'stream') return { val, end: before };
    if (src[p.pos] === 0x0d) p.pos++;
    if (src[p.pos] === 0x0a) p.pos++;
    return { val, end: p.pos, streamStart: p.pos };
  }

  private streamData(dict: Dict, start: number): Uint8Array {
    let length = dict.get('Length');
    if (length instanceof Ref) {
      const e = this.entries.get(length.num);
      length = e?.kind === 1 ? this.parseAt(this.src, e.offset, length).val : undefined;
    }
    let end = isCount(length) && start + length <= this.src.length ? start + length : -1;
    if (end < 0) {
      end = this.src.indexOf('endstream', start, 'latin1');
      if (end < 0) throw new Unreadable('stream end');
    }
    return this.decode(dict, this.src.subarray(start, end));
  }

  private decode(dict: Dict, raw: Uint8Array): Uint8Array {
    let filter = dict.get('Filter');
    let parms = dict.get('DecodeParms');
    if (Array.isArray(filter)) {
      if (filter.length > 1) throw new Unreadable('filter chain');
      filter = filter[0];
      parms = Array.isArray(parms) ? parms[0] : parms;
    }
    if (filter === undefined || filter === null) return raw;
    if (!isName(filter, 'FlateDecode')) throw new Unreadable('filter');
    const budget = MAX_INFLATED - this.inflated;
    if (budget <= 0) throw new Unreadable('inflate budget');
    let out: Buffer;
    try {
      out = inflateSync(raw, { maxOutputLength: budget, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    } catch {
      throw new Unreadable('inflate');
    }
    this.inflated += out.length;
    const predictor = parms instanceof Dict ? parms.get('Predictor') : undefined;
    if (!isCount(predictor) || predictor === 1) return out;
    if (predictor < 10 || !(parms instanceof Dict)) throw new Unreadable('predictor');
    const int = (k: string, d: number) => {
      const v = parms.get(k);
      return isCount(v) && v > 0 && v < 1 << 16 ? v : d;
    };
    return unpredictPng(out, int('Columns', 1), int('Colors', 1), int('BitsPerComponent', 8));
  }

  /** The object a reference names, or undefined when the cross-references do not know it. */
  fetch(ref: Ref): Val | undefined {
    if (++this.fetches > MAX_FETCHES) throw new Unreadable('fetch budget');
    const e = this.entries.get(ref.num);
    if (!e) return undefined;
    if (e.kind === 1) {
      if (e.offset >= this.src.length) throw new Unreadable('object offset');
      const obj = this.parseAt(this.src, e.offset, ref);
      this.charge(obj.end - e.offset);
      return obj.val;
    }
    if (ref.gen !== 0) throw new Unreadable('compressed object generation');
    const stm = this.objectStream(e.stream);
    if (stm.nums[e.index] !== ref.num) throw new Unreadable('object stream index');
    const p = new Parser(stm.data, stm.first + stm.offsets[e.index]);
    const val = p.value();
    this.charge(p.pos - stm.first - stm.offsets[e.index]);
    return val;
  }

  private charge(bytes: number): void {
    this.parsed += bytes;
    if (this.parsed > MAX_PARSED) throw new Unreadable('parse budget');
  }

  private objectStream(num: number): { data: Uint8Array; nums: number[]; offsets: number[]; first: number } {
    const cached = this.streams.get(num);
    if (cached) {
      this.streams.delete(num);
      this.streams.set(num, cached);
      return cached;
    }
    const e = this.entries.get(num);
    if (e?.kind !== 1) throw new Unreadable('object stream entry');
    const obj = this.parseAt(this.src, e.offset, new Ref(num, e.gen));
    const dict = obj.val;
    if (!(dict instanceof Dict) || obj.streamStart === undefined) throw new Unreadable('object stream');
    const n = dict.get('N');
    const first = dict.get('First');
    if (!isCount(n) || !isCount(first)) throw new Unreadable('object stream header');
    const data = this.streamData(dict, obj.streamStart);
    const p = new Parser(data);
    const nums: number[] = [];
    const offsets: number[] = [];
    for (let i = 0; i < n; i++) {
      const a = p.value();
      const b = p.value();
      if (!isCount(a) || !isCount(b) || first + b >= data.length) throw new Unreadable('object stream pairs');
      nums.push(a);
      offsets.push(b);
    }
    const stm = { data, nums, offsets, first };
    this.streams.set(num, stm);
    this.streamBytes += data.length;
    for (const [k, v] of this.streams) {
      if (this.streamBytes <= MAX_CACHED_STREAM_BYTES || k === num) break;
      this.streams.delete(k);
      this.streamBytes -= v.data.length;
    }
    return stm;
  }
}

function unpredictPng(data: Uint8Array, columns: number, colors: number, bits: number): Uint8Array {
  const rowLen = Math.ceil((columns * colors * bits) / 8);
  const bpp = Math.max(1, Math.ceil((colors * bits) / 8));
  const rows = Math.floor(data.length / (rowLen + 1));
  const out = new Uint8Array(rows * rowLen);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLen + 1)];
    const src = r * (rowLen + 1) + 1;
    const dst = r * rowLen;
    for (let i = 0; i < rowLen; i++) {
      const x = data[src + i];
      const left = i >= bpp ? out[dst + i - bpp] : 0;
      const up = r > 0 ? out[dst - rowLen + i] : 0;
      const upLeft = r > 0 && i >= bpp ? out[dst - rowLen + i - bpp] : 0;
      let v: number;
      if (type === 0) v = x;
      else if (type === 1) v = x + left;
      else if (type === 2) v = x + up;
      else if (type === 3) v = x + ((left + up) >> 1);
      else if (type === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - upLeft);
        v = x + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
      } else throw new Unreadable('png predictor row');
      out[dst + i] = v & 0xff;
    }
  }
  return out;
}

/** Quick test on the raw bytes: only a file with object streams or a long plain /Kids array is parsed. */
export function mayHaveFlatPageTree(bytes: Buffer): boolean {
  if (bytes.includes('/ObjStm', 0, 'latin1')) return true;
  let from = 0;
  for (;;) {
    const at = bytes.indexOf('/Kids', from, 'latin1');
    if (at < 0) return false;
    let p = at + 5;
    while (p < bytes.length && isWhite(bytes[p])) p++;
    // /Kids naming an array object elsewhere: the parse decides.
    if (bytes[p] !== 0x5b) return true;
    let refs = 0;
    for (p++; p < bytes.length && bytes[p] !== 0x5d; p++) if (bytes[p] === 0x52 && ++refs > MAX_FLAT_KIDS) return true;
    from = p;
  }
}

interface Plan {
  ref: Ref;
  node: Dict;
  kids: Ref[];
  counts: number[];
}

/**
 * The bytes with every page-tree node of more than MAX_FLAT_KIDS kids split under intermediate
 * nodes (an incremental update appended), or null when no node needs it or the file is not one
 * this reader follows.
 */
export function rebalancePageTree(bytes: Buffer): Buffer | null {
  if (!bytes.subarray(0, 1024).includes('%PDF-') || !mayHaveFlatPageTree(bytes)) return null;
  try {
    const objects = new PdfObjects(bytes);
    objects.readXref();
    const plans = findFlatNodes(objects);
    return plans.length ? appendUpdate(bytes, objects, plans) : null;
  } catch {
    // Unreadable, or bytes this reader trips on: pdf.js gets the file as it came.
    return null;
  }
}

function findFlatNodes(objects: PdfObjects): Plan[] {
  const rootRef = objects.trailer!.get('Root');
  const catalog = rootRef instanceof Ref ? objects.fetch(rootRef) : undefined;
  const pagesRef = catalog instanceof Dict ? catalog.get('Pages') : undefined;
  if (!(pagesRef instanceof Ref)) return [];
  const encrypted = objects.trailer!.entries.has('Encrypt');
  const plans: Plan[] = [];
  const stack: Ref[] = [pagesRef];
  const seen = new Set<number>();
  while (stack.length) {
    const ref = stack.pop()!;
    if (seen.has(ref.num)) continue;
    seen.add(ref.num);
    const node = objects.fetch(ref);
    if (!(node instanceof Dict)) continue;
    let kids = node.get('Kids');
    if (kids instanceof Ref) kids = objects.fetch(kids);
    if (!Array.isArray(kids)) continue;
    const count = node.get('Count');
    // Kids of a short node that counts one page per kid are pages: nothing below to split.
    if (kids.length <= MAX_FLAT_KIDS && count === kids.length) continue;
    const refs: Ref[] = [];
    const counts: number[] = [];
    const kidNums = new Set<number>();
    let splittable = kids.length > MAX_FLAT_KIDS;
    for (const kid of kids) {
      if (!(kid instanceof Ref)) {
        splittable = false;
        continue;
      }
      // pdf.js reports a kid listed twice as a cycle; such a node is left to it.
      if (kidNums.has(kid.num)) {
        splittable = false;
        break;
      }
      kidNums.add(kid.num);
      const kidDict = objects.fetch(kid);
      if (!(kidDict instanceof Dict)) {
        splittable = false;
        continue;
      }
      let type = kidDict.get('Type');
      if (type instanceof Ref) type = objects.fetch(type);
      // pdf.js's test: a /Page, or anything without /Kids, is one page.
      if (isName(type, 'Page') || !kidDict.entries.has('Kids')) {
        counts.push(1);
      } else {
        const c = kidDict.get('Count');
        if (!isCount(c)) splittable = false;
        counts.push(isCount(c) ? c : 0);
        stack.push(kid);
      }
      refs.push(kid);
    }
    // In an encrypted file a string copied into the rewritten node would be decrypted twice.
    if (splittable && encrypted && [...node.entries.values()].some((e) => holdsString(e.val))) splittable = false;
    if (splittable) plans.push({ ref, node, kids: refs, counts });
  }
  return plans;
}

function holdsString(v: Val, depth = 0): boolean {
  if (v instanceof Str) return true;
  if (depth > MAX_NESTING) return true;
  if (Array.isArray(v)) return v.some((x) => holdsString(x, depth + 1));
  if (v instanceof Dict) return [...v.entries.values()].some((e) => holdsString(e.val, depth + 1));
  return false;
}

interface NewNode {
  num: number;
  kids: string[];
  count: number;
  parent: string;
}

function appendUpdate(bytes: Buffer, objects: PdfObjects, plans: Plan[]): Buffer | null {
  const trailer = objects.trailer!;
  let next = 1;
  for (const num of objects.entries.keys()) next = Math.max(next, num + 1);
  const size = trailer.get('Size');
  if (isCount(size)) next = Math.max(next, size);
  const firstNew = next;
  const created: NewNode[] = [];
  const rewritten: { plan: Plan; kids: string[] }[] = [];
  for (const plan of plans) {
    let level = plan.kids.map((k, i) => ({ ref: `${k.num} ${k.gen} R`, count: plan.counts[i], node: null as NewNode | null }));
    while (level.length > FANOUT) {
      const up: typeof level = [];
      for (let i = 0; i < level.length; i += FANOUT) {
        const group = level.slice(i, i + FANOUT);
        const node: NewNode = { num: next++, kids: group.map((g) => g.ref), count: group.reduce((a, g) => a + g.count, 0), parent: '' };
        for (const g of group) if (g.node) g.node.parent = `${node.num} 0 R`;
        created.push(node);
        up.push({ ref: `${node.num} 0 R`, count: node.count, node });
      }
      level = up;
    }
    for (const g of level) if (g.node) g.node.parent = `${plan.ref.num} ${plan.ref.gen} R`;
    rewritten.push({ plan, kids: level.map((g) => g.ref) });
  }
  if (next > MAX_OBJECT_NUMBER) return null;

  const parts: Buffer[] = [];
  let offset = bytes.length;
  const push = (b: Buffer) => {
    parts.push(b);
    offset += b.length;
  };
  if (bytes[bytes.length - 1] !== 0x0a && bytes[bytes.length - 1] !== 0x0d) push(Buffer.from('\n'));
  const xref: string[] = ['xref\n'];
  const entry = (off: number, gen: number) => `${String(off).padStart(10, '0')} ${String(gen).padStart(5, '0')} n\r\n`;
  for (const { plan, kids } of rewritten) {
    xref.push(`${plan.ref.num} 1\n`, entry(offset, plan.ref.gen));
    const body: Buffer[] = [Buffer.from(`${plan.ref.num} ${plan.ref.gen} obj\n<<`)];
    for (const [key, e] of plan.node.entries) {
      if (key === 'Kids') continue;
      body.push(Buffer.from(' '), Buffer.from(plan.node.src.subarray(e.start, e.end)));
    }
    body.push(Buffer.from(` /Kids [${kids.join(' ')}] >>\nendobj\n`));
    push(Buffer.concat(body));
  }
  if (created.length) {
    xref.push(`${firstNew} ${created.length}\n`);
    for (const node of created) {
      xref.push(entry(offset, 0));
      push(Buffer.from(`${node.num} 0 obj\n<< /Type /Pages /Parent ${node.parent} /Kids [${node.kids.join(' ')}] /Count ${node.count} >>\nendobj\n`));
    }
  }
  const keep: Buffer[] = [];
  for (const key of ['Root', 'Info', 'ID', 'Encrypt']) {
    const e = trailer.entries.get(key);
    if (e) keep.push(Buffer.from(' '), Buffer.from(trailer.src.subarray(e.start, e.end)));
  }
  const xrefAt = offset;
  push(Buffer.from(xref.join('')));
  push(Buffer.concat([Buffer.from(`trailer\n<< /Size ${next}`), ...keep, Buffer.from(` /Prev ${objects.startxref} >>\nstartxref\n${xrefAt}\n%%EOF\n`)]));
  return Buffer.concat([bytes, ...parts]);
}
