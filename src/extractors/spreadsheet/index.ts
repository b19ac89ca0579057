/** Excel workbooks, XLSX and legacy XLS (SheetJS reads both; the extraction code is in spreadsheet.ts). */
import { TABLE_ROWS } from '../shared/chunk-profile.ts';
import { defineFormat, type Extractor } from '../shared/descriptor.ts';
import { hasOle2Signature, hasZipSignature, oleHasEntry } from '../shared/signatures.ts';

declare module '../shared/types.ts' {
  interface DocumentKinds {
    xlsx: true;
    xls: true;
  }
}

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const extract: Extractor = async (input) => (await import('./spreadsheet.ts')).extractSpreadsheet(input);
const chunking = { size: 1200, overlap: 200, separators: TABLE_ROWS };

export const SPREADSHEET_FORMAT = defineFormat({
  id: 'spreadsheet',
  kinds: {
    xlsx: { expected: 'an Excel workbook (XLSX)', description: 'Excel workbooks', chunking, extract },
    xls: { expected: 'a legacy Excel workbook (XLS)', description: 'Legacy Excel workbooks', chunking, extract },
  },
  formats: {
    xlsx: {
      kind: 'xlsx',
      label: 'an Excel workbook (XLSX)',
      mime: XLSX,
      mediaTypes: [XLSX, 'application/vnd.ms-excel.sheet.macroenabled.12'],
      extensions: ['xlsx', 'xlsm', 'xltx'],
    },
    // Some servers label CSV as application/vnd.ms-excel: the CSV format claims text bytes under it.
    xls: { kind: 'xls', label: 'a legacy Excel workbook (XLS)', mime: 'application/vnd.ms-excel', mediaTypes: ['application/vnd.ms-excel', 'application/msexcel'], extensions: ['xls'] },
  },
  magic: (e) => {
    const b = e.bytes;
    if (hasZipSignature(b)) {
      // As for DOCX: a declared XLSX in an unreadable zip goes to the extractor for the precise error.
      const ooxml = e.ooxml();
      return ooxml === 'xlsx' || (ooxml === null && e.hint === 'xlsx') ? 'xlsx' : undefined;
    }
    if (!hasOle2Signature(b)) return undefined;
    if (oleHasEntry(b, 'Workbook') || oleHasEntry(b, 'Book')) return 'xls';
    // A declared XLS without a workbook stream name found: the extractor gives the precise error,
    // unless it is a legacy Word or PowerPoint file, which detection refuses with its own message.
    if (e.hint === 'xls' && !oleHasEntry(b, 'WordDocument') && !oleHasEntry(b, 'PowerPoint Document')) return 'xls';
    return undefined;
  },
});
