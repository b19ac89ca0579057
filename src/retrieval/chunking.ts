/**
 * Adaptive chunking. Size, overlap and separators depend on the document type (pdf 1500/300,
 * pptx 800/150 with slide separators first, xlsx/csv 1200/200, docx/html 1500/300, default
 * 1200/250) and on its length (> 100,000 chars: size x 1.5, overlap x 1.3; < 5,000 chars: size / 2
 * (min 400), overlap / 2 (min 50)). Text is split recursively — by the first separator of the list
 * that occurs, oversized pieces again by the next ones, down to a hard cut — and the pieces are
 * merged greedily up to the size, carrying trailing pieces up to the overlap into the next chunk.
 *
 * In a collection (option `documentLevel`) documents compete with one another, and BM25's statistics
 * are per chunk: an abstract cut into three 600-char chunks loses to whole documents of the same
 * topic. There a short document (content up to WHOLE_DOCUMENT_CHARS) is one chunk, and the halving
 * for documents under 5,000 chars is off (SciFact through a collection: nDCG@10 0.681 -> 0.698,
 * the same as the evaluation over whole abstracts; scripts/eval.ts --via collection).
 *
 * A plain-text file whose first line stands alone as a title (text extractor: metadata.title with
 * title_from 'first_line') gets that line as the heading of its chunks, as a Markdown "# " would.
 *
 * Every chunk is an exact slice of the content ([char_start, char_end)), so page ranges come from
 * the extractor's page map and heading paths from the Markdown headings before it.
 *
 * Spreadsheets (xlsx, xls, csv) are the exception: their content previews 20 rows per table, so
 * their chunks are built from tables[] (every row; see table-chunks.ts). Such chunks are not
 * slices of the content; their offsets are into the document's "index text", the chunk texts
 * joined in order by "\n\n" (chunk 0 starts at 0, each next one 2 chars after the previous end),
 * so that indexText.slice(char_start, char_end) === text and offsets still order the chunks.
 *
 * Every loop is written as steps (src/util/slices.ts), so the same code chunks a small text at
 * once (chunkDocument) or a 100 MB one in time slices that keep the event loop answering and stop
 * when the call is aborted (chunkDocumentSliced). Nothing here is quadratic in the input.
 */
import { CHUNK_PROFILES } from '../extractors/registry.ts';
import { DEFAULT_CHUNKING } from '../extractors/shared/chunk-profile.ts';
import type { DocumentKind, PageSpan, ProcessedDocument } from '../extractors/shared/types.ts';
import type { Chunk } from './types.ts';
import { contentType, importanceScore } from './chunk-importance.ts';
import { planSpreadsheet, renderSpreadsheet, type SpreadsheetPlan } from './table-chunks.ts';
import { MAX_CHUNK_CHARS } from './schemas.ts';
import { runSliced, runSync, type Steps } from '../util/slices.ts';

/** Loop iterations between two possible pauses: small enough that a step takes microseconds. */
const STEP = 256;

/** No chunk is ever longer than this (the product's contract; the wire schema states it). */
export { MAX_CHUNK_CHARS };


export interface ChunkingProfile {
  size: number;
  overlap: number;
  separators: readonly string[];
}

export interface ChunkOptions {
  /** Override the adaptive size (chars, 100-5000). */
  chunkSize?: number;
  /** Override the adaptive overlap (chars, < size). */
  overlap?: number;
  /**
   * Chunks that rank against other documents' chunks (a collection): a document of up to
   * WHOLE_DOCUMENT_CHARS is one chunk, and short documents keep the full size. Ignored with
   * chunkSize (the caller chose the size).
   */
  documentLevel?: boolean;
}

/** With documentLevel, documents up to this many chars of content are one chunk. */
export const WHOLE_DOCUMENT_CHARS = 2000;

/** Each kind's base profile, from its format's descriptor (src/extractors/<format>/index.ts). */
const BASE: Readonly<Record<DocumentKind, ChunkingProfile>> = CHUNK_PROFILES;

export function chunkingProfile(kind: string, contentLength: number, opts: ChunkOptions = {}): ChunkingProfile {
  const base = BASE[kind as DocumentKind] ?? DEFAULT_CHUNKING;
  let size = base.size;
  let overlap = base.overlap;
  if (contentLength > 100_000) {
    size = Math.round(size * 1.5);
    overlap = Math.round(overlap * 1.3);
  } else if (contentLength < 5_000 && !(opts.documentLevel && opts.chunkSize === undefined)) {
    size = Math.max(400, Math.round(size / 2));
    overlap = Math.max(50, Math.round(overlap / 2));
  }
  if (opts.documentLevel && opts.chunkSize === undefined && contentLength <= WHOLE_DOCUMENT_CHARS) size = Math.max(size, contentLength);
  if (opts.chunkSize !== undefined) size = Math.min(MAX_CHUNK_CHARS, Math.max(100, Math.floor(opts.chunkSize)));
  if (opts.overlap !== undefined) overlap = Math.max(0, Math.floor(opts.overlap));
  overlap = Math.min(overlap, Math.floor(size / 2));
  return { size: Math.min(size, MAX_CHUNK_CHARS), overlap, separators: base.separators };
}

interface Span {
  start: number;
  end: number;
}

/**
 * Splits [start, end) of text into windows of at most `size` chars. The first separator that occurs
 * cuts the region into pieces; runs of pieces that fit are merged (with overlap) among themselves,
 * and an oversized piece is split again with the next separators — so a window crosses a
 * higher-level boundary (a slide, a section, a paragraph) only by joining whole pieces. Separators
 * that begin with a newline open the next piece (a heading stays with its section); others close
 * the piece they end (a sentence keeps its full stop).
 */
function* splitRecursive(text: string, start: number, end: number, separators: readonly string[], profile: { size: number; overlap: number }, out: Span[]): Steps<void> {
  const { size } = profile;
  if (end - start <= size) {
    if (end > start) out.push({ start, end });
    return;
  }
  let si = separators.findIndex((s) => s === '' || indexIn(text, s, start, end) >= 0);
  if (si < 0) si = separators.length; // none occurs: hard cut below
  const sep = separators[si] ?? '';
  if (sep === '') {
    for (let at = start, n = 0; at < end; n++) {
      let cut = Math.min(end, at + size);
      // Never cut a surrogate pair in two.
      if (cut < end && isLowSurrogate(text.charCodeAt(cut))) cut--;
      out.push({ start: at, end: cut });
      at = cut;
      if (n % STEP === 0) yield;
    }
    return;
  }
  const rest = separators.slice(si + 1);
  const opensPiece = sep.startsWith('\n');
  const pieces: Span[] = [];
  let pieceStart = start;
  let from = start;
  for (let n = 1; ; n++) {
    const at = indexIn(text, sep, from, end);
    if (at < 0) break;
    const boundary = opensPiece ? at : at + sep.length;
    if (boundary > pieceStart && boundary < end) {
      pieces.push({ start: pieceStart, end: boundary });
      pieceStart = boundary;
    }
    from = at + sep.length;
    if (n % STEP === 0) yield;
  }
  pieces.push({ start: pieceStart, end });
  let fitting: Span[] = [];
  for (const piece of pieces) {
    if (piece.end - piece.start <= size) {
      fitting.push(piece);
      continue;
    }
    if (fitting.length) yield* mergePieces(fitting, size, profile.overlap, out);
    fitting = [];
    yield* splitRecursive(text, piece.start, piece.end, rest, profile, out);
  }
  if (fitting.length) yield* mergePieces(fitting, size, profile.overlap, out);
}

function indexIn(text: string, sep: string, from: number, end: number): number {
  if (end - from < sep.length) return -1;
  const at = text.slice(from, end).indexOf(sep);
  return at < 0 ? -1 : from + at;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Greedy merge of contiguous pieces into windows of at most `size`, overlapping by up to `overlap`, appended to `out`. */
function* mergePieces(pieces: Span[], size: number, overlap: number, out: Span[]): Steps<void> {
  let i = 0;
  for (let n = 1; i < pieces.length; n++) {
    if (n % STEP === 0) yield;
    const first = i;
    let end = pieces[i].end;
    i++;
    while (i < pieces.length && pieces[i].end - pieces[first].start <= size) {
      end = pieces[i].end;
      i++;
    }
    out.push({ start: pieces[first].start, end });
    if (i >= pieces.length) break;
    // Step back over trailing pieces that fit in the overlap, but always make progress.
    let back = i;
    while (back - 1 > first && end - pieces[back - 1].start <= overlap) back--;
    i = back;
  }
}

const PAGE_MARKER_TAIL = /\n-{3} (?:Page|Slide|Sheet) [^\n]* -{3}\s*$/;

/** Shrinks a span to its non-blank text, dropping a trailing page marker (it belongs to the next chunk). */
function trimSpan(text: string, s: Span): Span | null {
  let { start, end } = s;
  for (;;) {
    while (start < end && /\s/.test(text[start])) start++;
    while (end > start && /\s/.test(text[end - 1])) end--;
    const m = PAGE_MARKER_TAIL.exec(text.slice(Math.max(start, end - 200), end));
    if (!m || end - m[0].length <= start) break;
    end -= m[0].length;
  }
  return end > start ? { start, end } : null;
}

interface HeadingMark {
  offset: number;
  level: number;
  title: string;
}

const HEADING_RE = /^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$/gm;

/** Text scanned for headings per step; windows end at a line break, and a heading is one line. */
const HEADING_WINDOW = 1 << 16;

function* findHeadings(text: string): Steps<HeadingMark[]> {
  const out: HeadingMark[] = [];
  for (let from = 0; from < text.length; ) {
    let to = text.indexOf('\n', Math.min(text.length, from + HEADING_WINDOW));
    to = to < 0 ? text.length : to + 1;
    const window = from === 0 && to === text.length ? text : text.slice(from, to);
    for (const m of window.matchAll(HEADING_RE)) {
      const title = m[2].trim();
      if (title) out.push({ offset: from + (m.index ?? 0), level: m[1].length, title });
    }
    from = to;
    yield;
  }
  return out;
}

/**
 * The heading stack in force at an offset, ignoring headings before `floor` (a new slide or
 * sheet). Chunks come in document order, so the stack is carried forward from one chunk to the
 * next instead of being rebuilt from the first heading each time (which was chunks x headings).
 */
class HeadingCursor {
  private next = 0;
  private stack: HeadingMark[] = [];
  private floor = -1;
  private offset = -1;

  constructor(private readonly headings: readonly HeadingMark[]) {}

  at(offset: number, floor: number): string[] {
    if (floor !== this.floor || offset < this.offset) {
      this.floor = floor;
      this.stack = [];
      this.next = lowerBound(this.headings, floor);
    }
    this.offset = offset;
    const hs = this.headings;
    while (this.next < hs.length && hs[this.next].offset <= offset) {
      const h = hs[this.next++];
      while (this.stack.length > 0 && this.stack[this.stack.length - 1].level >= h.level) this.stack.pop();
      this.stack.push(h);
    }
    return this.stack.map((h) => h.title);
  }
}

/** Index of the first heading at or after `offset`. */
function lowerBound(headings: readonly HeadingMark[], offset: number): number {
  let lo = 0;
  let hi = headings.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (headings[mid].offset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function spanAt(pages: PageSpan[], offset: number): PageSpan | null {
  let lo = 0;
  let hi = pages.length - 1;
  let found: PageSpan | null = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (pages[mid].start <= offset) {
      found = pages[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Chunks plain text of a given kind (no page map). */
export function chunkText(text: string, kind: string, opts: ChunkOptions = {}): Chunk[] {
  return runSync(chunkContent(text, kind, [], opts));
}

export function chunkDocument(doc: ProcessedDocument, opts: ChunkOptions = {}): Chunk[] {
  return runSync(chunkDocumentSteps(doc, opts));
}

/** chunkDocument in time slices: the event loop keeps answering, and an abort stops it within a slice. */
export function chunkDocumentSliced(doc: ProcessedDocument, opts: ChunkOptions = {}, signal?: AbortSignal): Promise<Chunk[]> {
  return runSliced(chunkDocumentSteps(doc, opts), { signal, what: 'Chunking' });
}

function* chunkDocumentSteps(doc: ProcessedDocument, opts: ChunkOptions): Steps<Chunk[]> {
  const sheets = planSpreadsheet(doc);
  if (sheets) return yield* chunkSpreadsheet(doc.kind, sheets, opts);
  return yield* chunkContent(doc.content ?? '', doc.kind, doc.pages ?? [], opts, firstLineTitle(doc));
}

/** The title a plain-text extractor read from the first line (a heading at offset 0), if any. */
function firstLineTitle(doc: ProcessedDocument): string | null {
  const title = doc.metadata?.title;
  return doc.metadata?.title_from === 'first_line' && typeof title === 'string' && title ? title : null;
}

/** Separator between chunk texts in a spreadsheet's index text (what its offsets point into). */
export const INDEX_TEXT_SEPARATOR = '\n\n';

/** The text a spreadsheet's chunk offsets point into (for other documents: their content). */
export function indexTextOf(chunks: ReadonlyArray<Pick<Chunk, 'text'>>): string {
  return chunks.map((c) => c.text).join(INDEX_TEXT_SEPARATOR);
}

/**
 * Row groups of every table (no overlap: see table-chunks.ts) and the sheets' other text, split
 * like any text. The size adapts to the length of the full rendering, not of the 20-row preview.
 */
function* chunkSpreadsheet(kind: string, plan: SpreadsheetPlan, opts: ChunkOptions): Steps<Chunk[]> {
  const profile = chunkingProfile(kind, plan.length, opts);
  const chunks: Chunk[] = [];
  let offset = 0;
  const push = (text: string, type: Chunk['content_type'], sheet: string | null, sheetNumber: number | null) => {
    chunks.push({
      text,
      chunk_index: chunks.length,
      total_chunks: 0,
      importance_score: importanceScore(text),
      content_type: type,
      doc_type: kind,
      page_start: sheetNumber,
      page_end: sheetNumber,
      char_start: offset,
      char_end: offset + text.length,
      heading_path: sheet !== null ? [sheet] : [],
    });
    offset += text.length + INDEX_TEXT_SEPARATOR.length;
  };
  for (const piece of renderSpreadsheet(plan, { size: profile.size, maxChars: MAX_CHUNK_CHARS })) {
    yield;
    if (piece.kind === 'table') {
      push(piece.text, 'table', piece.sheet, piece.sheetNumber);
      continue;
    }
    const windows: Span[] = [];
    yield* splitRecursive(piece.text, 0, piece.text.length, profile.separators, profile, windows);
    let last: Span | null = null;
    for (const w of windows) {
      yield;
      const s = trimSpan(piece.text, w);
      if (!s || (last && s.start >= last.start && s.end <= last.end)) continue;
      last = s;
      const text = piece.text.slice(s.start, s.end);
      push(text, contentType(text), piece.sheet, piece.sheetNumber);
    }
  }
  for (const c of chunks) c.total_chunks = chunks.length;
  return chunks;
}

function* chunkContent(content: string, kind: string, pageMap: readonly PageSpan[], opts: ChunkOptions, title: string | null = null): Steps<Chunk[]> {
  if (!/\S/.test(content)) return [];
  const profile = chunkingProfile(kind, content.length, opts);
  const windows: Span[] = [];
  yield* splitRecursive(content, 0, content.length, profile.separators, profile, windows);
  // Heading sections (DOCX without known pages, HTML, Markdown) are not pages: their chunks say null.
  const pages = [...pageMap].filter((p) => p.unit !== 'section' && (p.end > p.start || p.start >= 0)).sort((a, b) => a.start - b.start);
  const headings = yield* findHeadings(content);
  if (title && !(headings[0]?.offset === 0)) headings.unshift({ offset: 0, level: 1, title });
  const cursor = new HeadingCursor(headings);
  const chunks: Chunk[] = [];
  let last: Span | null = null;
  for (const w of windows) {
    yield;
    const s = trimSpan(content, w);
    if (!s) continue;
    // Trimming can make a window fall inside the previous one; such a window adds nothing.
    if (last && s.start >= last.start && s.end <= last.end) continue;
    last = s;
    const text = content.slice(s.start, s.end);
    const first = pages.length ? spanAt(pages, s.start) : null;
    const lastPage = pages.length ? spanAt(pages, s.end - 1) : null;
    const unitFloor = first && (first.unit === 'slide' || first.unit === 'sheet') ? first.start : 0;
    const path = cursor.at(s.start, unitFloor);
    if (first?.label && (first.unit === 'slide' || first.unit === 'sheet') && path[0] !== first.label) path.unshift(first.label);
    chunks.push({
      text,
      chunk_index: chunks.length,
      total_chunks: 0,
      importance_score: importanceScore(text),
      content_type: contentType(text),
      doc_type: kind,
      page_start: first?.number ?? null,
      page_end: lastPage?.number ?? first?.number ?? null,
      char_start: s.start,
      char_end: s.end,
      heading_path: path,
    });
  }
  for (const c of chunks) c.total_chunks = chunks.length;
  return chunks;
}
