/**
 * Shared pieces of the integration suite: a loopback static file server that counts requests (over
 * a folder the caller names: generated files here, the corpus in test/corpus/integration), a
 * generated PDF of up to 100 pages with known phrases on known pages, multipart bodies, the tiny
 * ONNX models copied into a temporary MODELS_DIR, and app builders that keep DATA_DIR across a
 * restart. Nothing here reads the corpus.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import PDFDocument from 'pdfkit';
import { buildTestApp, tempDir, testConfig, type Teardown } from '../helper.ts';
import { loadConfig } from '../../src/config.ts';
import { MODELS_FIXTURE_DIR } from '../retrieval/model-fixtures.ts';
import { FIXTURE_KINDS, FIXTURE_NAMES, fixtureSubset, type FixtureFiles } from '../fixtures-gen/documents.ts';

// ---------------------------------------------------------------- static server

export interface StaticServer {
  origin: string;
  /** URL of a file under the served root, by its path relative to the root. */
  url(rel: string): string;
  /** Serves `bytes` at /mem/<name> with the given Content-Type. */
  add(name: string, bytes: Buffer, contentType?: string): string;
  /** Requests for a file added with `add` (by name) or a file under the root (by relative path). */
  hits(rel: string): number;
  totalHits(): number;
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.xls': 'application/vnd.ms-excel',
  '.csv': 'text/csv',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.html': 'text/html',
  '.txt': 'text/plain',
};

/**
 * Serves the folder `root` read-only at /files/<rel> (none without a root) and in-memory files at
 * /mem/<name>, on 127.0.0.1 only. Paths are resolved inside the root (no traversal).
 */
export async function startStaticServer(t: Teardown, root?: string): Promise<StaticServer> {
  const base = root === undefined ? undefined : path.resolve(root);
  const hits = new Map<string, number>();
  const mem = new Map<string, { bytes: Buffer; type: string }>();
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    hits.set(p, (hits.get(p) ?? 0) + 1);
    let body: Buffer | null = null;
    let type = 'application/octet-stream';
    if (p.startsWith('/mem/')) {
      const f = mem.get(p.slice(5));
      if (f) [body, type] = [f.bytes, f.type];
    } else if (base !== undefined && p.startsWith('/files/')) {
      const file = path.resolve(base, p.slice(7));
      if (file.startsWith(base + path.sep) && fs.existsSync(file) && fs.statSync(file).isFile()) {
        body = fs.readFileSync(file);
        type = CONTENT_TYPES[path.extname(file).toLowerCase()] ?? type;
      }
    }
    if (!body) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': type, 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.teardown(close);
  return {
    origin,
    url: (rel) => `${origin}/files/${rel}`,
    add(name, bytes, contentType = 'application/octet-stream') {
      mem.set(name, { bytes, type: contentType });
      return `${origin}/mem/${name}`;
    },
    hits: (rel) => hits.get(mem.has(rel) ? `/mem/${rel}` : `/files/${rel}`) ?? 0,
    totalHits: () => [...hits.values()].reduce((a, b) => a + b, 0),
    close,
  };
}

/**
 * A temporary folder holding generated fixtures (test/fixtures-gen/documents.ts; all kinds unless
 * `kinds` names some) under their FIXTURE_NAMES names, to serve with startStaticServer: the
 * self-contained suite's "corpus".
 */
export async function generatedRoot(t: Teardown, kinds: ReadonlyArray<keyof FixtureFiles> = FIXTURE_KINDS): Promise<string> {
  const dir = tempDir(t, 'rag-files-');
  const files = await fixtureSubset(kinds);
  for (const kind of kinds) fs.writeFileSync(path.join(dir, FIXTURE_NAMES[kind]), files[kind]);
  return dir;
}

// ---------------------------------------------------------------- the 100-page PDF

export const LONG_PDF_PAGES = 100;

/** Phrases that occur exactly once in the document, on the page given. */
export const PLANTED: ReadonlyArray<{ page: number; phrase: string; query: string }> = [
  { page: 7, phrase: 'The heliotrope vantablack reservoir stores seventeen quintals of marmalade.', query: 'heliotrope vantablack reservoir' },
  { page: 42, phrase: 'Zygomorphic lanterns illuminate the quokka observatory every solstice.', query: 'zygomorphic lanterns quokka observatory' },
  { page: 93, phrase: 'The obsidian xylophone ensemble rehearses beneath the tamarind aqueduct.', query: 'obsidian xylophone tamarind aqueduct' },
];

const WORDS = (
  'market revenue growth quarter customer supply product service region policy budget forecast risk ' +
  'analysis segment margin contract partner network system design process quality audit report review ' +
  'training safety energy water transport logistics inventory pricing demand capacity research program ' +
  'project schedule resource vendor support platform security compliance finance operation strategy team'
).split(' ');

/** Deterministic filler prose: different on every page so no two chunks are near-duplicates. */
function filler(page: number, paragraph: number): string {
  let seed = page * 7919 + paragraph * 104729 + 13;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const sentences: string[] = [];
  for (let s = 0; s < 5; s++) {
    const n = 9 + Math.floor(next() * 6);
    const words = Array.from({ length: n }, () => WORDS[Math.floor(next() * WORDS.length)]!);
    words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
    sentences.push(`${words.join(' ')} ${page}.${paragraph}.${s}.`);
  }
  return sentences.join(' ');
}

/**
 * A born-digital PDF of `pages` pages (pdfkit, 100 by default): a heading and three paragraphs per
 * page, the PLANTED phrases on their pages (those within the page count).
 */
export function makeLongPdf(pages = LONG_PDF_PAGES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ autoFirstPage: false, info: { Title: 'Integration Handbook', CreationDate: new Date('2024-03-14T12:00:00Z') } });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    for (let page = 1; page <= pages; page++) {
      doc.addPage({ size: 'A4', margin: 56 });
      doc.fontSize(16).text(`Chapter ${page} operating notes`);
      doc.moveDown(0.5).fontSize(11);
      for (let p = 0; p < 3; p++) {
        doc.text(filler(page, p));
        if (p === 1) {
          const planted = PLANTED.find((x) => x.page === page);
          if (planted) doc.text(planted.phrase);
        }
        doc.moveDown(0.5);
      }
    }
    doc.end();
  });
}

// ---------------------------------------------------------------- requests

/** A multipart/form-data body with the file as `file` and the other fields as text parts. */
export function multipart(file: { bytes: Buffer; filename: string; contentType?: string }, fields: Record<string, string> = {}) {
  const boundary = `----rag-integration-${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${file.filename}"\r\n` +
        `content-type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
    ),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

// ---------------------------------------------------------------- apps

/** The tiny generated models (scripts/make-test-models.py) copied into a fresh MODELS_DIR. */
export function tinyModelsDir(t: Teardown): string {
  const dir = tempDir(t, 'rag-models-');
  fs.cpSync(MODELS_FIXTURE_DIR, dir, { recursive: true });
  return dir;
}

/**
 * Builds an app on `dataDir` (kept across builds so a second app sees the first one's indexes).
 * Private networks are allowed so the loopback static server can be used.
 */
export async function buildAppOn(t: Teardown, dataDir: string, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const config = loadConfig({ DATA_DIR: dataDir, RATE_LIMIT_RPM: '100000', ALLOW_PRIVATE_NETWORKS: 'true', ONNX_THREADS: '1', ...env });
  return buildTestApp(t, { config });
}

/** An app with its own temp DATA_DIR and private networks allowed. */
export function buildLocalApp(t: Teardown, env: Record<string, string> = {}): Promise<FastifyInstance> {
  return buildTestApp(t, { config: testConfig(t, { ALLOW_PRIVATE_NETWORKS: 'true', ONNX_THREADS: '1', ...env }) });
}

export async function post(app: FastifyInstance, url: string, payload: object) {
  const res = await app.inject({ method: 'POST', url, payload });
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}
