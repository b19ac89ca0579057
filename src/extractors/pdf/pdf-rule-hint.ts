/**
 * A cheap look at a page's content stream before pdf.js lists its operators for ruling lines
 * (pdf-rules.ts; a list costs most of what the page's text costs). A ruled table needs
 * MIN_TABLE_RULES straight rules, so a page whose content draws fewer straight path pieces, paints
 * no form XObject (which could draw more) and has no annotations (whose appearances are listed
 * too) has none. Pieces are counted from the raw bytes: rectangles (4 edges each), line segments
 * and path closes. Operator-like tokens inside strings or inline image data only count extra, so
 * every doubt ends in "may have rules", as does anything RawPdf cannot read.
 */
import { isDict, isName, isRef, type PdfRef, type PdfValue, type RawPdf } from './pdf-raw-objects.ts';
import { MIN_TABLE_RULES } from './pdf-tables.ts';

/** Content streams longer than this (all parts together) are not scanned: the operator list decides. */
const MAX_SCANNED_BYTES = 4 * 1024 * 1024;

const END = String.raw`(?=[\s()<>\[\]{}/%]|$)`;
const START = String.raw`(?:^|(?<=[\s()<>\[\]{}]))`;
const PIECE_OPS = new RegExp(`${START}(re|l|h|s|b\\*?)${END}`, 'g');
const DO_OPS = new RegExp(String.raw`/([^\s()<>\[\]{}/%]+)\s*Do${END}`, 'g');

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
  const content = contentText(raw, page.get('Contents'));
  if (content === null) return true;
  let pieces = 0;
  for (const m of content.matchAll(PIECE_OPS)) {
    pieces += m[1] === 're' ? 4 : 1;
    if (pieces >= MIN_TABLE_RULES) return true;
  }
  const names = new Set<string>();
  for (const m of content.matchAll(DO_OPS)) names.add(m[1]!);
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

/** The page's content as latin1 text (every part of a /Contents array), or null when unreadable. */
function contentText(raw: RawPdf, contents: PdfValue | undefined): string | null {
  const data = raw.content(contents, MAX_SCANNED_BYTES);
  return data && Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1');
}
