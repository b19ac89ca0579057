/**
 * Ruling lines of a page read from its raw content stream, without pdf.js. pdf.js can only give a
 * page's paths through its operator list, and listing the operators also runs every text operator
 * through the page's fonts again: on a born-digital report that is as much time as reading the text
 * itself, for a handful of lines (`npm run bench:pdf-text`). The paths need far less: the
 * path-construction operators, the painting operators that end them, q/Q, cm and form XObjects.
 *
 * This reader feeds the same path data, in the same order, to the same rule finder
 * (pdf-rules.ts `rulesFromOperatorList`) as pdf.js's operator list would: coordinates as float32
 * (pdf.js stores path data and form matrices in Float32Arrays), `re` as pdf.js expands it, the
 * close of `s`/`b`/`b*`, unclosed `q` closed at the end of each stream, forms with their /Matrix.
 * Anything it does not follow returns null and the caller lists the operators with pdf.js as
 * before: annotations, an inline image, an operator without its operands, a form it cannot read or
 * that is optional content, a `Q` without its `q`, a stream it cannot decode.
 * test/extractors/pdf-content-rules.test.ts (generated files) and the corpus suite compare both
 * readers page by page.
 */
import type { Rule } from './pdf-geometry.ts';
import { isDict, isName, isRef, PdfObjectParser, type PdfRef, type PdfValue, type RawPdf } from './pdf-raw-objects.ts';
import { rulesFromOperatorList, type PdfOps } from './pdf-rules.ts';

/** Content bytes (all parts and forms together) read at most; past it pdf.js lists the operators. */
const MAX_CONTENT_BYTES = 4 * 1024 * 1024;
/** Forms inside forms followed at most. */
const MAX_FORM_DEPTH = 8;

/** Our own operator codes for the rule finder (any distinct numbers do). */
const OPS: PdfOps = { save: 1, restore: 2, transform: 3, constructPath: 4, paintFormXObjectBegin: 5, paintFormXObjectEnd: 6, endPath: 7, clip: 8, eoClip: 9 };
const PAINT = 10;
/** pdf.js path data codes (DrawOPS). */
const MOVE = 0;
const LINE = 1;
const CURVE = 2;
const CLOSE = 4;

class Unsupported extends Error {}

interface Listing {
  fnArray: number[];
  argsArray: unknown[];
  bytes: number;
}

/**
 * The page's ruling lines in device space (`viewport`: the page's viewport transform at scale 1),
 * or null when this reader cannot follow the page (the caller asks pdf.js).
 */
export function rulesFromContent(raw: RawPdf, pageRef: PdfRef | null | undefined, viewport: number[]): Rule[] | null {
  try {
    if (!pageRef || typeof pageRef.num !== 'number') return null;
    const page = raw.resolve(pageRef);
    if (!isDict(page)) return null;
    // pdf.js lists annotation appearances after the page's own operators: left to it.
    const annots = raw.resolve(page.get('Annots'));
    if (annots !== undefined && annots !== null && !(Array.isArray(annots) && annots.length === 0)) return null;
    const listing: Listing = { fnArray: [], argsArray: [], bytes: 0 };
    // All parts of /Contents read as one stream, as pdf.js reads them.
    const content = raw.content(page.get('Contents'), MAX_CONTENT_BYTES);
    if (!content) return null;
    listStream(raw, content, raw.inherited(page, 'Resources'), listing, new Set(), 0);
    return rulesFromOperatorList(listing.fnArray, listing.argsArray, OPS, viewport);
  } catch {
    return null;
  }
}

function listStream(raw: RawPdf, data: Uint8Array, resources: PdfValue | undefined, out: Listing, seen: Set<number>, depth: number): void {
  out.bytes += data.length;
  if (out.bytes > MAX_CONTENT_BYTES) throw new Unsupported('content too long');
  const parser = new PdfObjectParser(data);
  const operands: Array<PdfValue | undefined> = [];
  let path: number[] = [];
  let saved = 0;
  // An operator's operands are its last ones (pdf.js drops extra ones before them); with too few,
  // pdf.js skips the operator with a warning: left to it.
  const num = (i: number): number => {
    const v = operands[operands.length - i];
    if (typeof v !== 'number') throw new Unsupported('operand missing or not a number');
    // As read: pdf.js adds `re`'s width in double precision and rounds only when it stores the path.
    return v;
  };
  const paint = (close: boolean, skip: boolean) => {
    if (close) path.push(CLOSE);
    // pdf.js lists an empty path too; the rule finder skips it, as it skips `n` and clips.
    out.fnArray.push(OPS.constructPath);
    out.argsArray.push([skip ? OPS.endPath : PAINT, [path.length ? Float32Array.from(path) : null], null]);
    path = [];
  };
  for (;;) {
    const token = parser.next();
    if (token === undefined) {
      if (parser.pos < parser.end) throw new Unsupported('unreadable token');
      break;
    }
    if (token === null || typeof token !== 'object' || !('op' in token)) {
      operands.push(token as PdfValue);
      if (operands.length > 64) throw new Unsupported('too many operands');
      continue;
    }
    switch (token.op) {
      case 'q':
        saved++;
        out.fnArray.push(OPS.save);
        out.argsArray.push(null);
        break;
      case 'Q':
        if (saved === 0) throw new Unsupported('Q without q');
        saved--;
        out.fnArray.push(OPS.restore);
        out.argsArray.push(null);
        break;
      case 'cm':
        // Doubles, not float32: pdf.js keeps the transform operator's operands as read.
        if (operands.length < 6 || operands.slice(-6).some((v) => typeof v !== 'number')) throw new Unsupported('cm');
        out.fnArray.push(OPS.transform);
        out.argsArray.push(operands.slice(-6));
        break;
      case 'm':
        path.push(MOVE, num(2), num(1));
        break;
      case 'l':
        path.push(LINE, num(2), num(1));
        break;
      case 'c':
      case 'v':
      case 'y':
        // Only the end point counts for rules (a curve is none): the control points as pdf.js keeps them do not matter.
        for (let i = token.op === 'c' ? 6 : 4; i > 2; i--) num(i);
        path.push(CURVE, 0, 0, 0, 0, num(2), num(1));
        break;
      case 'h':
        path.push(CLOSE);
        break;
      case 're': {
        const x = num(4);
        const y = num(3);
        const w = num(2);
        const h = num(1);
        // Rounded to float32 with the rest of the path by Float32Array.from, as pdf.js stores it.
        const xw = x + w;
        const yh = y + h;
        if (w === 0 || h === 0) path.push(MOVE, x, y, LINE, xw, yh, CLOSE);
        else path.push(MOVE, x, y, LINE, xw, y, LINE, xw, yh, LINE, x, yh, CLOSE);
        break;
      }
      case 'S':
      case 'f':
      case 'F':
      case 'f*':
      case 'B':
      case 'B*':
        paint(false, false);
        break;
      case 's':
      case 'b':
      case 'b*':
        paint(true, false);
        break;
      case 'n':
        paint(false, true);
        break;
      case 'BI':
        // Inline image data is binary: not tokenized here.
        throw new Unsupported('inline image');
      case 'Do': {
        const name = operands[operands.length - 1];
        if (!isName(name)) throw new Unsupported('Do');
        form(raw, name.name, resources, out, seen, depth);
        break;
      }
      default:
        break;
    }
    operands.length = 0;
  }
  // pdf.js closes a stream's unclosed q with restores at its end.
  for (; saved > 0; saved--) {
    out.fnArray.push(OPS.restore);
    out.argsArray.push(null);
  }
}

/** A Do: an image adds no rule (pdf.js leaves images out of the text pass's lists); a form is read in place. */
function form(raw: RawPdf, name: string, resources: PdfValue | undefined, out: Listing, seen: Set<number>, depth: number): void {
  const xobjects = isDict(resources) ? raw.resolve(resources.get('XObject')) : undefined;
  const ref = isDict(xobjects) ? xobjects.get(name) : undefined;
  if (!isRef(ref)) throw new Unsupported('XObject');
  const stream = raw.stream(ref);
  if (!stream) throw new Unsupported('XObject stream');
  const subtype = raw.resolve(stream.dict.get('Subtype'));
  if (isName(subtype) && subtype.name === 'Image') return;
  if (!isName(subtype) || subtype.name !== 'Form') throw new Unsupported('XObject subtype');
  if (stream.dict.has('OC') || depth >= MAX_FORM_DEPTH || seen.has(ref.num)) throw new Unsupported('form');
  const data = raw.decodedStream(ref);
  if (!data) throw new Unsupported('form stream');
  const m = raw.resolve(stream.dict.get('Matrix'));
  const matrix = Array.isArray(m) && m.length === 6 && m.every((v) => typeof v === 'number') ? Float32Array.from(m as number[]) : null;
  out.fnArray.push(OPS.paintFormXObjectBegin);
  out.argsArray.push([matrix, null]);
  const own = raw.resolve(stream.dict.get('Resources'));
  seen.add(ref.num);
  listStream(raw, data, isDict(own) ? own : resources, out, seen, depth + 1);
  seen.delete(ref.num);
  out.fnArray.push(OPS.paintFormXObjectEnd);
  out.argsArray.push(null);
}
