/**
 * The sheets of an XLSX package as the workbook part lists them (name, part, worksheet or chart
 * sheet), and the number of cells and rows each worksheet's XML holds, counted on the inflated
 * bytes before SheetJS builds anything from them.
 */
import { readPart, readRels, relKind, type Package } from '../shared/ooxml-parts.ts';
import { attr, child, children } from '../shared/xml.ts';
import { readZipEntry, type ZipEntryInfo } from '../shared/zip.ts';

export interface WorkbookSheet {
  name: string;
  part: string;
  kind: 'worksheet' | 'chartsheet' | 'other';
}

export function packageOf(bytes: Buffer, entries: ZipEntryInfo[]): Package {
  return { bytes, entries: new Map(entries.map((e) => [e.name, e])) };
}

/** The workbook part named by the package relationships (xl/workbook.xml in practice). */
function workbookPart(pkg: Package): string {
  for (const rel of readRels(pkg, '').values()) if (relKind(rel) === 'officeDocument' && !rel.external) return rel.target;
  return 'xl/workbook.xml';
}

export function listSheets(pkg: Package): WorkbookSheet[] {
  const part = workbookPart(pkg);
  const rels = readRels(pkg, part);
  const out: WorkbookSheet[] = [];
  for (const sheet of children(child(child(readPart(pkg, part), 'workbook'), 'sheets'), 'sheet')) {
    const name = attr(sheet, 'name');
    const rel = rels.get(attr(sheet, 'r:id') ?? '');
    if (!name || !rel || rel.external) continue;
    const kind = relKind(rel);
    out.push({ name, part: rel.target, kind: kind === 'worksheet' || kind === 'chartsheet' ? kind : 'other' });
  }
  return out;
}

export interface CellCount {
  cells: number;
  rows: number;
}

const SLICE = 16 * 1024 * 1024;

/**
 * Cells with content (<c>...</c>) and rows (<row>) of one worksheet part, scanned in slices so that a 300 MB
 * part never becomes one string. A tag cut by a slice edge is seen whole in the next slice, which
 * starts a few bytes earlier; tags starting in that overlap are not counted twice.
 */
export function countCells(xml: Buffer): CellCount {
  const OVERLAP = 64;
  let cells = 0;
  let rows = 0;
  for (let at = 0; at < xml.length; at += SLICE) {
    const from = Math.max(0, at - OVERLAP);
    const text = xml.subarray(from, Math.min(xml.length, at + SLICE)).toString('latin1');
    const re = /<(?:[A-Za-z_][\w.-]*:)?(c|row)[\s>/]/g;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (from + m.index < at) continue;
      if (m[1] === 'row') {
        rows++;
        continue;
      }
      // Styled blanks (<c r="B2" s="3"/>) hold no value and SheetJS keeps none.
      const end = text.indexOf('>', m.index);
      if (end < 0 || text[end - 1] !== '/') cells++;
    }
  }
  return { cells, rows };
}

/** Cells and rows of each worksheet by sheet name; the part is inflated under `maxPartBytes`. */
export function countWorkbookCells(pkg: Package, sheets: WorkbookSheet[], maxPartBytes: number): Map<string, CellCount> {
  const counts = new Map<string, CellCount>();
  for (const s of sheets) {
    const entry = pkg.entries.get(s.part);
    if (s.kind !== 'worksheet' || !entry) continue;
    counts.set(s.name, countCells(readZipEntry(pkg.bytes, entry, maxPartBytes)));
  }
  return counts;
}
