/**
 * Public sample documents for the tools' published examples (OpenAPI, Swagger UI, README). Each is
 * a test file of a well-known open-source project (MIT licence), addressed by commit so that it
 * never changes or moves, and served by raw.githubusercontent.com: a public address, so a fresh
 * server with the default address policy (no private or loopback targets) fetches it. The same
 * files at these commits are in the test corpus (../shared/corpus/MANIFEST.tsv), so what each
 * example returns is known.
 */
const MARKITDOWN =
  'https://raw.githubusercontent.com/microsoft/markitdown/a51f725d7ff4cdfe3bb6ad2ce2c04d98bf5f1f00/packages/markitdown/tests/test_files';
const DOCLING = 'https://raw.githubusercontent.com/docling-project/docling/e1cb2b234c48ff29746b0f2f843d07f8e23905a0/tests/data';

export const SAMPLE_URLS = {
  /** The first page of the AutoGen paper (one page, text layer, 93 KB). */
  pdf: `${MARKITDOWN}/test.pdf`,
  /** A three-page repair invoice whose tables continue across pages (177 KB). */
  invoicePdf: `${MARKITDOWN}/REPAIR-2022-INV-001_multipage.pdf`,
  /** An excerpt of the AutoGen paper: title, headings, a table and an image (136 KB). */
  docx: `${MARKITDOWN}/test.docx`,
  /** Six slides about AutoGen: a chart, a table, grouped shapes, pictures with alt text (278 KB). */
  pptx: `${MARKITDOWN}/test.pptx`,
  /** Two sheets; Sheet1 has the columns Alpha, Beta, Gamma, Delta, and one Beta cell holds a UUID (12 KB). */
  xlsx: `${MARKITDOWN}/test.xlsx`,
  /** Five customer records in twelve columns, semicolon-delimited, some fields quoted (1 KB). */
  csv: `${DOCLING}/csv/sources/csv-semicolon.csv`,
  /** A photo of the AutoGen paper's first page (JPEG, 474 KB), for OCR. */
  image: `${MARKITDOWN}/test.jpg`,
} as const;

/** The UUID in a Beta cell of SAMPLE_URLS.xlsx. */
export const SAMPLE_XLSX_UUID = '6ff4173b-42a5-4784-9b19-f49caff4d93d';
