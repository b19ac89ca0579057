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

/**
 * The same examples offline. `npm run demo` (scripts/demo.ts) writes one sample file per kind
 * under these names, serves them on DEMO_FILES_ORIGIN and starts the server with
 * ALLOWED_HOSTS set to that origin, so each tool's `*_offline` example (withOfflineTwins) works
 * on a machine without internet. Their contents answer the public examples' other inputs (the
 * queries, the spreadsheet's UUID in column Beta).
 */
export const DEMO_FILES_PORT = 8090;
export const DEMO_FILES_ORIGIN = `http://127.0.0.1:${DEMO_FILES_PORT}`;

export const DEMO_FILES = {
  pdf: 'agents.pdf',
  invoicePdf: 'invoice.pdf',
  docx: 'field-report.docx',
  pptx: 'briefing.pptx',
  xlsx: 'sheet.xlsx',
  csv: 'customers.csv',
  image: 'page.jpg',
} as const satisfies Record<keyof typeof SAMPLE_URLS, string>;

const PUBLIC_TO_DEMO: ReadonlyMap<string, string> = new Map(
  (Object.keys(SAMPLE_URLS) as Array<keyof typeof SAMPLE_URLS>).map((k) => [SAMPLE_URLS[k], `${DEMO_FILES_ORIGIN}/${DEMO_FILES[k]}`]),
);

const OFFLINE_DESCRIPTION =
  `Works without internet: run \`npm run demo\`, which writes sample files, serves them on ${DEMO_FILES_ORIGIN} ` +
  `and starts this server with ALLOWED_HOSTS=127.0.0.1:${DEMO_FILES_PORT} (a server started otherwise refuses loopback URLs with 403 URL_NOT_ALLOWED).`;

/**
 * Whether a server with these ALLOWED_HOSTS entries fetches the demo's files (`npm run demo` starts
 * it so): then the offline twins are the examples that work, and the served OpenAPI document lists
 * them first (offlineFirst), so Swagger UI's default "Try it out" succeeds without internet.
 */
export function demoFilesAllowed(allowedHosts: readonly string[]): boolean {
  const host = new URL(DEMO_FILES_ORIGIN).host;
  const hostname = new URL(DEMO_FILES_ORIGIN).hostname;
  return allowedHosts.some((h) => h === host || h === hostname);
}

/**
 * An OpenAPI document whose every examples map lists the offline twins first (the first example is
 * Swagger UI's default); the rest in their order. Maps without twins are left as they are.
 */
export function offlineFirst<T>(doc: T): T {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === 'examples' && v && typeof v === 'object' && !Array.isArray(v)) {
        const entries = Object.entries(v);
        const twins = entries.filter(([name]) => name.endsWith(OFFLINE_SUFFIX));
        out[k] = twins.length === 0 ? v : Object.fromEntries([...twins, ...entries.filter(([name]) => !name.endsWith(OFFLINE_SUFFIX))]);
      } else out[k] = visit(v);
    }
    return out;
  };
  return visit(doc) as T;
}

/** The suffix of an offline twin's name. */
export const OFFLINE_SUFFIX = '_offline';

/** A value with every public sample URL replaced by its demo file's URL, and whether it named one. */
function offlineValue(value: unknown): { value: unknown; changed: boolean } {
  if (typeof value === 'string') {
    const local = PUBLIC_TO_DEMO.get(value);
    return local ? { value: local, changed: true } : { value, changed: false };
  }
  if (Array.isArray(value)) {
    const items = value.map(offlineValue);
    return { value: items.map((i) => i.value), changed: items.some((i) => i.changed) };
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => [k, offlineValue(v)] as const);
    return { value: Object.fromEntries(entries.map(([k, v]) => [k, v.value])), changed: entries.some(([, v]) => v.changed) };
  }
  return { value, changed: false };
}

/**
 * The examples, then for each one that names a public sample URL its offline twin (the same
 * request on the demo's files, `<name>_offline`). The public ones come first: the first example
 * stays Swagger UI's default and the upload form's pre-fill.
 */
export function withOfflineTwins<T>(examples: ReadonlyArray<{ name: string; summary: string; description?: string; value: T }>) {
  const twins = examples.flatMap((e) => {
    const offline = offlineValue(e.value);
    if (!offline.changed) return [];
    return [{ name: `${e.name}${OFFLINE_SUFFIX}`, summary: `${e.summary}, offline (npm run demo)`, description: OFFLINE_DESCRIPTION, value: offline.value as T }];
  });
  return [...examples, ...twins];
}
