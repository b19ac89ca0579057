/**
 * One fetch per call: building an index looks at the file once (its hash names the index), and
 * extraction reuses those bytes instead of downloading (or, for uploads, hashing) them again.
 * The download cache is made too small to hold the file, so a second fetch would reach the origin.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import type { CallContext, DocumentSource } from '../../src/call-context.ts';
import { loadConfig } from '../../src/config.ts';
import { DocumentService } from '../../src/documents/document-service.ts';
import { OcrPool } from '../../src/extractors/ocr/ocr-pool.ts';
import { RetrievalService } from '../../src/retrieval/retrieval-service.ts';
import { startLocalServer } from '../documents/fixtures/local-server.ts';

const TEXT = Array.from({ length: 30 }, (_, i) => `Paragraph ${i}: the budget for project ${i} is ${1000 + i} EUR and the deadline is March.`).join('\n\n');

async function setup(t: Test) {
  const server = await startLocalServer();
  t.teardown(() => server.close());
  server.route('/notes.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(TEXT);
  });
  // downloadMaxBytes: 1 -> nothing fits the download cache; every fetch of a URL is a download.
  const caches = new CacheRegistry({ ttlMs: 60_000, downloadMaxBytes: 1 });
  const ocr = new OcrPool({ size: 1, cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ocr-cache-')) });
  const documents = new DocumentService({ config: loadConfig({}, { ALLOW_PRIVATE_NETWORKS: true }), caches, ocr });
  t.teardown(async () => {
    await documents.close();
    await ocr.close();
  });
  // Every fetch (a download for a URL, a sha256 of the bytes for an upload) is counted, including
  // any the loader would make on its own.
  let fetches = 0;
  const fetch = documents.fetch.bind(documents);
  documents.fetch = (source: DocumentSource, ctx: CallContext) => {
    fetches++;
    return fetch(source, ctx);
  };
  const retrieval = new RetrievalService({ documents, caches });
  return { server, retrieval, fetches: () => fetches, url: `${server.origin}/notes.txt` };
}

const ctx = () => ({ signal: new AbortController().signal });

t.test('retrieve_chunks on a new URL downloads it once', async (t) => {
  const s = await setup(t);
  const res = await s.retrieval.retrieve({ sources: [{ url: s.url }], query: 'deadline for project 7' }, ctx());
  t.equal(res.retrieval.documents[0].index, 'built');
  t.match(res.results[0].text, /project 7\b/);
  t.equal(s.server.hits.get('/notes.txt'), 1, 'one request reached the origin');
  t.equal(s.fetches(), 1, 'one fetch');

  // A later call fetches once to learn the content hash, and serves the index from memory.
  const again = await s.retrieval.retrieve({ sources: [{ url: s.url }], query: 'budget' }, ctx());
  t.equal(again.retrieval.documents[0].index, 'memory');
  t.equal(s.server.hits.get('/notes.txt'), 2);
  t.equal(s.fetches(), 2);
});

t.test('an uploaded file is hashed once per call', async (t) => {
  const s = await setup(t);
  const upload = { bytes: Buffer.from(TEXT), filename: 'notes.txt', contentType: 'text/plain' };
  const res = await s.retrieval.retrieve({ sources: [{ upload }], query: 'deadline for project 12' }, ctx());
  t.equal(res.results[0].source, 'upload:notes.txt');
  t.equal(s.fetches(), 1, 'one fetch: the upload is hashed once');
  t.equal(s.server.hits.size, 0);
});

t.test('chunk_document fetches once', async (t) => {
  const s = await setup(t);
  const out = await s.retrieval.chunk({ url: s.url }, ctx());
  t.ok(out.chunks.length > 1);
  t.equal(s.server.hits.get('/notes.txt'), 1);
  t.equal(s.fetches(), 1);
});
