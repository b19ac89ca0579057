/**
 * retrieve_chunks on a generated 100-page PDF through the real app, without models (lexical): cold
 * (download -> extract -> chunk -> index -> persist), warm (memory), after a restart on the same
 * DATA_DIR (disk: no extraction), coalescing of concurrent calls, /health during indexing,
 * manage_cache clearing memory and disk, and a corrupt index on disk rebuilt transparently.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { tempDir } from '../helper.ts';
import { CHUNKER_VERSION } from '../../src/retrieval/retrieval-service.ts';
import { buildAppOn, LONG_PDF_PAGES, makeLongPdf, PLANTED, post, startStaticServer, type StaticServer } from './helpers.ts';

let pdf: Buffer;
// The cache and corruption cases need a stored index, not a long document: 10 pages (PLANTED[0]
// is on page 7) cost a tenth of the extraction and indexing of the 100 pages, which each of those
// cases repeats for every app it builds.
let tenPages: Buffer;
let srv: StaticServer;
t.before(async () => {
  pdf = await makeLongPdf();
  tenPages = await makeLongPdf(10);
  srv = await startStaticServer(t);
});

const retrieve = (app: FastifyInstance, url: string, query: string, extra: object = {}) =>
  post(app, '/v1/documents/retrieve', { document_url: url, query, top_k: 3, ...extra });

const indexDirs = (dataDir: string) => fs.readdirSync(path.join(dataDir, 'indexes')).filter((d) => !d.startsWith('.'));

/** The page a phrase sits on in the extracted text: the last `--- Page N ---` marker before it. */
function pageOf(content: string, phrase: string): number {
  const at = content.indexOf(phrase);
  const markers = [...content.slice(0, at).matchAll(/--- Page (\d+) ---/g)];
  return Number(markers.at(-1)?.[1]);
}

/** The planted phrase's chunk ranks first, and its page range covers the page the phrase is on. */
function assertPlantedHit(t: Test, body: Record<string, any>, planted: (typeof PLANTED)[number]) {
  const top = body.results[0];
  t.ok(top.text.includes(planted.phrase), `"${planted.query}": the chunk holding the phrase ranks first`);
  t.ok(top.page_start <= planted.page && planted.page <= top.page_end, `page ${planted.page} in [${top.page_start}, ${top.page_end}]`);
  t.ok(top.page_end - top.page_start <= 1, 'a chunk spans at most two pages here');
  // Where the chunk starts on an earlier page, the phrase comes after the marker of its own page.
  const marker = top.text.indexOf(`--- Page ${planted.page} ---`);
  if (top.page_start < planted.page) t.ok(marker >= 0 && marker < top.text.indexOf(planted.phrase), 'phrase after its page marker');
  t.equal(body.results.filter((r: { text: string }) => r.text.includes(planted.phrase)).length, 1, 'exactly one chunk holds it');
}

t.test('cold, then warm from memory, then after a restart from disk without re-extraction', async (t) => {
  const dataDir = tempDir(t);
  const url = srv.add('cold-warm.pdf', pdf, 'application/pdf');

  const hitsBefore = srv.hits('cold-warm.pdf');

  const app1 = await buildAppOn(t, dataDir);
  const cold = await retrieve(app1, url, PLANTED[0]!.query);
  t.equal(cold.status, 200);
  assertPlantedHit(t, cold.body, PLANTED[0]!);
  const chunks = cold.body.total_chunks_indexed;
  t.ok(chunks >= 60 && chunks <= 150, `${chunks} chunks for 100 pages`);
  t.match(cold.body.retrieval, { mode: 'lexical', embedder: null, reranker: 'unavailable' });
  t.same(cold.body.retrieval.documents, [{ source: url, document_type: 'pdf', chunks, index: 'built', embedder: null }]);
  t.equal(srv.hits('cold-warm.pdf') - hitsBefore, 1, 'cold: one download');
  t.same(app1.services.documents.stats(), { downloads: 1, extractions: 1, downloads_in_flight: 0, extractions_in_flight: 0 });
  t.match(app1.services.retrieval.stats(), { built: 1, from_disk: 0, from_memory: 0, embedded_chunks: 0 });

  // Persisted: chunks and metadata (no vectors without an embedder), keyed by URL and content.
  const dirs = indexDirs(dataDir);
  t.equal(dirs.length, 1);
  const urlKey = createHash('sha256').update(url).digest('hex').slice(0, 16);
  const contentSha = createHash('sha256').update(pdf).digest('hex');
  t.equal(dirs[0], `${urlKey}-${contentSha.slice(0, 16)}-c${CHUNKER_VERSION}`);
  t.same(fs.readdirSync(path.join(dataDir, 'indexes', dirs[0]!)).sort(), ['chunks.json', 'lexical.bin', 'manifest.json']);
  const meta = JSON.parse(fs.readFileSync(path.join(dataDir, 'indexes', dirs[0]!, 'manifest.json'), 'utf8'));
  t.match(meta, { kind: 'document', embedder: null, dimension: null, content_sha256: contentSha, chunks, hnsw: null, chunker_version: CHUNKER_VERSION });

  const warmAnswers: Record<string, any>[] = [];
  for (const planted of PLANTED.slice(1)) {
    const warm = await retrieve(app1, url, planted.query);
    t.equal(warm.status, 200);
    assertPlantedHit(t, warm.body, planted);
    t.equal(warm.body.retrieval.documents[0].index, 'memory');
    warmAnswers.push(warm.body);
  }
  t.equal(srv.hits('cold-warm.pdf') - hitsBefore, 1, 'warm: no new download');
  t.same(app1.services.documents.stats(), { downloads: 1, extractions: 1, downloads_in_flight: 0, extractions_in_flight: 0 }, 'warm: no new extraction');
  t.match(app1.services.retrieval.stats(), { built: 1, from_disk: 0, from_memory: 2 });

  // The generated document really has the phrases on the pages we placed them (asked of app1
  // once its own checks are done: it holds the extracted document, so nothing is extracted again).
  // process_document stops at 50,000 characters, so the full text is rebuilt from chunk_document's offsets.
  const processed = await post(app1, '/v1/documents/process', { document_url: url });
  t.equal(processed.body.metadata.page_count, LONG_PDF_PAGES);
  t.equal(processed.body.truncated, true);
  const chunked = await post(app1, '/v1/documents/chunk', { document_url: url });
  const content = Array<string>(processed.body.content_length).fill(' ');
  for (const c of chunked.body.chunks as Array<{ text: string; char_start: number; char_end: number }>) {
    t.equal(c.char_end - c.char_start, c.text.length);
    for (let i = 0; i < c.text.length; i++) content[c.char_start + i] = c.text[i]!;
  }
  const full = content.join('');
  t.ok(full.startsWith(processed.body.content.slice(0, 1000)), 'the chunks rebuild the extracted text');
  for (const p of PLANTED) t.equal(pageOf(full, p.phrase), p.page, `"${p.phrase.slice(0, 30)}..." is on page ${p.page}`);
  t.match(app1.services.documents.stats(), { extractions: 1 }, 'the check read the extraction already made');
  await app1.close();
  const hitsAfterApp1 = srv.hits('cold-warm.pdf');

  const app2 = await buildAppOn(t, dataDir);
  const again = await retrieve(app2, url, PLANTED[2]!.query);
  t.equal(again.status, 200);
  assertPlantedHit(t, again.body, PLANTED[2]!);
  t.equal(again.body.retrieval.documents[0].index, 'disk');
  t.same(
    again.body.results.map((r: Record<string, unknown>) => [r.chunk_index, r.page_start, r.page_end, r.score]),
    warmAnswers[1]!.results.map((r: Record<string, unknown>) => [r.chunk_index, r.page_start, r.page_end, r.score]),
    'the same answer as before the restart',
  );
  // The bytes are fetched again (the content hash names the index), but nothing is re-extracted.
  t.equal(srv.hits('cold-warm.pdf') - hitsAfterApp1, 1);
  t.same(app2.services.documents.stats(), { downloads: 1, extractions: 0, downloads_in_flight: 0, extractions_in_flight: 0 }, 'restart: no extraction');
  t.same(app2.services.retrieval.stats(), { built: 0, from_disk: 1, from_memory: 0, embedded_chunks: 0, builds_in_flight: 0 });

  // The same bytes under another URL reuse the stored index: no extraction, no new index folder.
  const copyUrl = srv.add('copy-of-cold-warm.pdf', pdf, 'application/pdf');
  const copy = await retrieve(app2, copyUrl, PLANTED[1]!.query);
  t.equal(copy.status, 200);
  assertPlantedHit(t, copy.body, PLANTED[1]!);
  t.equal(copy.body.retrieval.documents[0].index, 'disk');
  t.equal(srv.hits('copy-of-cold-warm.pdf'), 1);
  t.same(app2.services.documents.stats(), { downloads: 2, extractions: 0, downloads_in_flight: 0, extractions_in_flight: 0 }, 'copy: no extraction');
  t.match(app2.services.retrieval.stats(), { built: 0, from_disk: 2, embedded_chunks: 0 });
  t.equal(indexDirs(dataDir).length, 1, 'still one index on disk');
});

t.test('10 concurrent calls for one new document: 1 download, 1 extraction, 1 build', async (t) => {
  const dataDir = tempDir(t);
  const app = await buildAppOn(t, dataDir);
  const url = srv.add('concurrent.pdf', pdf, 'application/pdf');
  const queries = Array.from({ length: 10 }, (_, i) => PLANTED[i % PLANTED.length]!);
  const answers = await Promise.all(queries.map((p) => retrieve(app, url, p.query)));
  answers.forEach((a, i) => {
    t.equal(a.status, 200, `call ${i + 1}`);
    assertPlantedHit(t, a.body, queries[i]!);
  });
  t.equal(srv.hits('concurrent.pdf'), 1, 'one download');
  t.same(app.services.documents.stats(), { downloads: 1, extractions: 1, downloads_in_flight: 0, extractions_in_flight: 0 });
  const stats = app.services.retrieval.stats();
  t.equal(stats.built, 1, 'one build');
  t.equal(stats.from_disk, 0);
  t.equal(stats.builds_in_flight, 0);
  t.equal(indexDirs(dataDir).length, 1, 'one index on disk');
});

t.test('/health answers promptly while a large document is being indexed', async (t) => {
  const app = await buildAppOn(t, tempDir(t));
  const url = srv.add('health.pdf', pdf, 'application/pdf');
  let finished = false;
  const startedAt = performance.now();
  let endedAt = 0;
  const indexing = retrieve(app, url, PLANTED[0]!.query).then((r) => {
    finished = true;
    endedAt = performance.now();
    return r;
  });
  // Wait (bounded) until the extraction is running, then probe /health until the call completes.
  const deadline = Date.now() + 30_000;
  while (app.services.documents.stats().extractions_in_flight === 0 && !finished && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  let duringIndexing = 0;
  let slowest = 0;
  while (!finished) {
    const before = performance.now();
    const res = await app.inject('/health');
    const ms = performance.now() - before;
    t.equal(res.statusCode, 200);
    t.equal(res.json().status, 'ok');
    if (!finished) {
      duringIndexing++;
      slowest = Math.max(slowest, ms);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  t.ok(duringIndexing >= 1, `${duringIndexing} health answers came back while indexing was still running`);
  // Relative to the call's own duration, so a loaded machine slows both alike: indexing that held
  // the event loop would keep a probe waiting for about all of it.
  const callMs = endedAt - startedAt;
  t.ok(slowest < callMs / 2, `slowest health answer during indexing: ${Math.round(slowest)} ms of the ${Math.round(callMs)} ms call`);
  const done = await indexing;
  t.equal(done.status, 200);
  assertPlantedHit(t, done.body, PLANTED[0]!);
});

t.test('manage_cache clear empties the memory layers and the indexes on disk', async (t) => {
  const dataDir = tempDir(t);
  const app = await buildAppOn(t, dataDir);
  const url = srv.add('clear.pdf', tenPages, 'application/pdf');
  t.equal((await retrieve(app, url, PLANTED[0]!.query)).status, 200);
  t.equal(indexDirs(dataDir).length, 1);

  const before = (await post(app, '/v1/cache', { action: 'stats' })).body;
  t.same(
    before.layers.map((l: { name: string; entries: number }) => [l.name, l.entries]),
    [
      ['download', 1],
      ['document', 1],
      ['retriever', 1],
      ['indexes', 1],
    ],
  );
  const indexesLayer = before.layers.find((l: { name: string }) => l.name === 'indexes');
  t.ok(indexesLayer.bytes > 10_000, `${indexesLayer.bytes} bytes on disk`);

  const cleared = await post(app, '/v1/cache', { action: 'clear' });
  t.equal(cleared.status, 200);
  t.same(cleared.body.evicted, { download: 1, document: 1, retriever: 1, indexes: 1 });
  t.equal(cleared.body.total_evicted, 4);
  t.same(cleared.body.totals, { entries: 0, bytes: 0 });
  t.same(indexDirs(dataDir), [], 'data/indexes is empty');

  // Everything is fetched, extracted and built again.
  const hits = srv.hits('clear.pdf');
  const again = await retrieve(app, url, PLANTED[0]!.query);
  t.equal(again.status, 200);
  assertPlantedHit(t, again.body, PLANTED[0]!);
  t.equal(again.body.retrieval.documents[0].index, 'built');
  t.equal(srv.hits('clear.pdf'), hits + 1);
  t.match(app.services.documents.stats(), { downloads: 2, extractions: 2 });
  t.equal(indexDirs(dataDir).length, 1);
});

t.test('a corrupt index on disk is rebuilt transparently with the right answer', async (t) => {
  const corruptions: Array<[string, (dir: string) => void]> = [
    ['chunks.json truncated', (dir) => fs.truncateSync(path.join(dir, 'chunks.json'), Math.floor(fs.statSync(path.join(dir, 'chunks.json')).size / 2))],
    ['manifest.json truncated to nothing', (dir) => fs.truncateSync(path.join(dir, 'manifest.json'), 0)],
    ['lexical.bin truncated', (dir) => fs.truncateSync(path.join(dir, 'lexical.bin'), Math.floor(fs.statSync(path.join(dir, 'lexical.bin')).size / 2))],
    ['chunks.json altered, same size', (dir) => {
      const file = path.join(dir, 'chunks.json');
      const text = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(file, text.replace(PLANTED[0]!.phrase, PLANTED[0]!.phrase.toUpperCase()));
    }],
  ];
  // One app builds and persists the index once; each case starts from a copy of that DATA_DIR.
  const pristine = tempDir(t);
  const url = srv.add('corrupt.pdf', tenPages, 'application/pdf');
  const first = await buildAppOn(t, pristine);
  t.equal((await retrieve(first, url, PLANTED[0]!.query)).status, 200);
  await first.close();
  const [key] = indexDirs(pristine);
  t.ok(key, 'the index was persisted');
  // Control: an undamaged copy is loaded from disk, so a rebuild below is the damage's doing.
  const intact = tempDir(t);
  fs.cpSync(pristine, intact, { recursive: true });
  const control = await buildAppOn(t, intact);
  const loaded = await retrieve(control, url, PLANTED[0]!.query);
  t.equal(loaded.body.retrieval.documents[0].index, 'disk', 'the copied index loads as it is');
  t.match(control.services.documents.stats(), { extractions: 0 });
  await control.close();
  for (const [name, corrupt] of corruptions) {
    const dataDir = tempDir(t);
    fs.cpSync(pristine, dataDir, { recursive: true });
    t.same(indexDirs(dataDir), [key], `${name}: starts from the stored index`);
    corrupt(path.join(dataDir, 'indexes', key!));

    const app = await buildAppOn(t, dataDir);
    const res = await retrieve(app, url, PLANTED[0]!.query);
    t.equal(res.status, 200, `${name}: answered`);
    assertPlantedHit(t, res.body, PLANTED[0]!);
    t.equal(res.body.retrieval.documents[0].index, 'built', `${name}: rebuilt, not loaded`);
    t.match(app.services.documents.stats(), { extractions: 1 });
    t.match(app.services.retrieval.stats(), { built: 1, from_disk: 0 });
    // The rebuilt index replaced the damaged one and is whole again.
    t.same(indexDirs(dataDir), [key]);
    const meta = JSON.parse(fs.readFileSync(path.join(dataDir, 'indexes', key!, 'manifest.json'), 'utf8'));
    t.equal(meta.chunks, res.body.total_chunks_indexed);
    const stored = JSON.parse(fs.readFileSync(path.join(dataDir, 'indexes', key!, 'chunks.json'), 'utf8'));
    t.equal(stored.length, meta.chunks);
    t.ok(stored.some((c: { text: string }) => c.text.includes(PLANTED[0]!.phrase)), `${name}: the stored chunks hold the original text`);
    await app.close();
  }
});
