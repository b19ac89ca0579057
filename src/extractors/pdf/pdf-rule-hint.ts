/**
 * A cheap look at a page's content stream before pdf.js lists its operators for ruling lines
 * (pdf-rules.ts; a list costs most of what the page's text costs). A ruled table needs
 * MIN_TABLE_RULES straight rules, so a page whose content draws fewer straight path pieces, paints
 * no form XObject (which could draw more) and has no annotations (whose appearances are listed
 * too) has none. Pieces are counted from the raw bytes: rectangles (4 edges each), line segments
 * and path closes. Operator-like tokens inside strings or inline image data only count extra, so
 * every doubt ends in "may have rules", as does anything RawPdf cannot read.
 */
import { isDict, isName, isRef, type PdfRef, type RawPdf } from './pdf-raw-objects.ts';
import { MIN_TABLE_RULES } from './pdf-tables.ts';

/** Content streams longer than this (all parts together) are not scanned: the operator list decides. */
const MAX_SCANNED_BYTES = 4 * 1024 * 1024;

const END = String.raw`(?=[\s()<>\[\]{}/%]|$)`;
const DO_OPS = new RegExp(String.raw`/([^\s()<>\[\]{}/%]+)\s*Do${END}`, 'g');
const DO = Buffer.from('Do', 'latin1');

/**
 * The bytes a path operator may follow (whitespace as a JavaScript \s reads it in latin1 text,
 * and ()<>[]{}) and be followed by (those, / and %): the delimiters of the regular expression
 * `(?:^|(?<=[\s()<>\[\]{}]))(re|l|h|s|b\*?)(?=[\s()<>\[\]{}/%]|$)`, which this scan replaced
 * (over the content as a latin1 string it was a third of the hint's time on a 400-page file).
 */
const BEFORE = new Uint8Array(256);
const AFTER = new Uint8Array(256);
for (const c of [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, ...Buffer.from('()<>[]{}', 'latin1')]) BEFORE[c] = AFTER[c] = 1;
AFTER[0x2f] = AFTER[0x25] = 1;

/** Straight path pieces drawn by `content`: 4 per `re`, 1 per `l`, `h`, `s`, `b` or `b*`; counting stops at `enough`. */
export function pathPieces(content: Uint8Array, enough: number): number {
  let pieces = 0;
  const n = content.length;
  for (let i = 0; i < n; i++) {
    const c = content[i]!;
    // r(e), l, h, s, b(*)
    if (c !== 0x72 && c !== 0x6c && c !== 0x68 && c !== 0x73 && c !== 0x62) continue;
    if (i > 0 && BEFORE[content[i - 1]!] === 0) continue;
    let end = i + 1;
    let weight = 1;
    if (c === 0x72) {
      if (content[i + 1] !== 0x65) continue;
      end = i + 2;
      weight = 4;
    } else if (c === 0x62 && content[i + 1] === 0x2a) end = i + 2;
    if (end < n && AFTER[content[end]!] === 0) continue;
    pieces += weight;
    if (pieces >= enough) return pieces;
  }
  return pieces;
}

/** False only when the page surely draws fewer than MIN_TABLE_RULES straight rules. */
export function mayHaveRules(raw: RawPdf, pageRef: PdfRef | null | undefined): boolean {
  try {
    return check(raw, pageRef);
  } catch {
    return true;
  }
}

function check(raw: RawPdf, pageRef: PdfRef | null | undefined): boolean {
  if (!pageRef || typeof pageRef.num !== 'number') return true;
  const page = raw.resolve(pageRef);
  if (!isDict(page)) return true;
  const annots = raw.resolve(page.get('Annots'));
  if (annots !== undefined && annots !== null && !(Array.isArray(annots) && annots.length === 0)) return true;
  const content = raw.content(page.get('Contents'), MAX_SCANNED_BYTES);
  if (content === null) return true;
  if (pathPieces(content, MIN_TABLE_RULES) >= MIN_TABLE_RULES) return true;
  // XObjects painted (any form among them could draw rules); no "Do" at all, none.
  if (Buffer.from(content.buffer, content.byteOffset, content.byteLength).indexOf(DO) < 0) return false;
  const text = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1');
  const names = new Set<string>();
  for (const m of text.matchAll(DO_OPS)) names.add(m[1]!);
  if (!names.size) return false;
  const resources = raw.inherited(page, 'Resources');
  const xobjects = isDict(resources) ? raw.resolve(resources.get('XObject')) : undefined;
  if (!isDict(xobjects)) return true;
  for (const name of names) {
    // A name not found as written (#-escaped in the content, say) counts as a form.
    const ref = xobjects.get(name);
    if (!isRef(ref)) return true;
    const subtype = raw.stream(ref)?.dict.get('Subtype');
    if (!isName(subtype) || subtype.name !== 'Image') return true;
  }
  return false;
}
