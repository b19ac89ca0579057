/**
 * The knowledge base end to end, as issue 10 "Speed and scale" asks, on a real server (buildApp +
 * createServices in a child process on 127.0.0.1, lexical only: no models) through its REST API:
 *
 *   1. ingestion: SciFact's 5,183 abstracts as one Markdown file each (title as '# ' heading),
 *      ingested by path in one job (documents/s, chunks/s); the ~400-page PDF of the corpus (pages/s);
 *   2. collections of ~10k and ~100k chunks (SciFact replicated with a suffix per copy, 500
 *      abstracts a file, ingested by path in one job each), server RSS per 100k chunks;
 *   3. lexical query latency p50/p95 over the SciFact train queries via POST
 *      /v1/collections/{name}/search, and in-process searchCollection on the same data folder;
 *   4. load: 20 ingestion jobs at once (small files by path) and 32 concurrent searches: errors,
 *      /health latency max and p95 meanwhile, peak RSS of the server process tree;
 *   5. start-up: the server stopped, a new one on the same DATA_DIR, time to its first search on the
 *      100k-chunk collection (target <= 2 s);
 *   6. quality side by side, same run: nDCG@10 on SciFact train for SQLite FTS5 bm25() (both the
 *      default unicode61 tokenizer and 'porter unicode61'), our collection search (documents ranked
 *      by their best chunk) and runEval lexical (what `npm run eval` prints), with their latencies.
 *
 *   npm run bench:kb            (node --expose-gc --import tsx; EVAL_DIR, CORPUS_DIR as the corpus suite; KB_BENCH_COPIES=14 for ~100k)
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EVAL_DIR = path.resolve(ROOT, process.env.EVAL_DIR || '../shared/eval');
const CORPUS_DIR = path.resolve(ROOT, process.env.CORPUS_DIR || '../shared/corpus');
const SCIFACT = path.join(EVAL_DIR, 'scifact');
const PDF_400 = path.join(CORPUS_DIR, 'pdf', 'pdf2image-memory-error-test-400p.pdf');
/** Replications of SciFact for the large collection (about 1.4 chunks per abstract in 500-abstract files). */
const COPIES = Number(process.env.KB_BENCH_COPIES ?? 14);
const PER_FILE = 500;
const LOAD_JOBS = 20;
const LOAD_FILES_PER_JOB = 25;
const LOAD_SEARCHERS = 32;

// ---------------------------------------------------------------- the server (child process)

async function serve(): Promise<void> {
  const { buildApp } = await import('../../src/app.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const { createServices } = await import('../../src/services.ts');
  const config = loadConfig({
    DATA_DIR: process.env.BENCH_DATA_DIR!,
    ALLOWED_DIRS: process.env.BENCH_ALLOWED_DIR!,
    RATE_LIMIT_RPM: '0',
    LOG_LEVEL: 'silent',
    MODEL_DOWNLOADS: 'never',
    MODELS_DIR: path.join(process.env.BENCH_DATA_DIR!, 'no-models'),
    MAX_UPLOAD_BYTES: String(256 * 1024 * 1024),
    INGEST_QUEUE_MAX: '100000',
    REQUEST_TIMEOUT: '3600',
  });
  const services = createServices(config, { startModels: false });
  const app = await buildApp({ config, services });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send!({ port: (app.server.address() as { port: number }).port });
  process.on('message', (m: { gc?: boolean }) => {
    if (!m.gc) return;
    (globalThis as { gc?: () => void }).gc?.();
    process.send!({ rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed });
  });
  process.on('disconnect', async () => {
    await app.close();
    await services.close();
    process.exit(0);
  });
}

interface Server {
  proc: ChildProcess;
  base: string;
  /** ms from fork to listening. */
  listenMs: number;
  t0: number;
}

async function startServer(dataDir: string, allowedDir: string): Promise<Server> {
  const t0 = performance.now();
  const proc = fork(process.argv[1]!, ['--serve'], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: { ...process.env, BENCH_DATA_DIR: dataDir, BENCH_ALLOWED_DIR: allowedDir },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as { port: number }));
    proc.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  return { proc, base: `http://127.0.0.1:${port}`, listenMs: performance.now() - t0, t0 };
}

async function stopServer(s: Server): Promise<void> {
  const exited = new Promise((r) => s.proc.once('exit', r));
  s.proc.disconnect();
  await exited;
}

/** RSS after a full GC in the server process (MB). */
async function serverRssAfterGc(s: Server): Promise<number> {
  const reply = new Promise<{ rss: number }>((r) => s.proc.once('message', (m) => r(m as { rss: number })));
  s.proc.send({ gc: true });
  return (await reply).rss / 1048576;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}
function childPids(pid: number): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((tid) => fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return [];
  }
}
const treeRssMb = (pid: number) => [pid, ...childPids(pid)].reduce((a, p) => a + statusKb(p, 'VmRSS'), 0) / 1024;

// ---------------------------------------------------------------- HTTP helpers

async function api<T = any>(base: string, method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(base + url, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

async function ingestPaths(base: string, name: string, paths: string[]): Promise<{ job: any; ms: number }> {
  const t0 = performance.now();
  const r = await api(base, 'POST', `/v1/collections/${name}/documents`, { paths });
  if (r.status !== 202) throw new Error(`ingest ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  const job = await waitJob(base, r.body.id ?? r.body.job_id);
  return { job, ms: performance.now() - t0 };
}

async function waitJob(base: string, id: string): Promise<any> {
  for (;;) {
    const r = await api(base, 'GET', `/v1/jobs/${id}`);
    if (['succeeded', 'partial', 'failed', 'cancelled'].includes(r.body.status)) return r.body;
    await new Promise((res) => setTimeout(res, 200));
  }
}

async function collectionStats(base: string, name: string): Promise<any> {
  return (await api(base, 'GET', `/v1/collections/${name}`)).body.stats;
}

// ---------------------------------------------------------------- numbers

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;
const rows: Array<[string, string, string]> = [];
const row = (what: string, value: string | number, note = '') => {
  rows.push([what, String(value), note]);
  console.error(`  ${what}: ${value}${note ? `  (${note})` : ''}`);
};

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const { readCorpus, readQueries, readQrels } = await import('../../src/retrieval/eval/beir.ts');
  const { ndcgAt } = await import('../../src/retrieval/eval/metrics.ts');
  const { runEval } = await import('../../src/retrieval/eval/run-eval.ts');
  const { writeAbstracts, rankDocuments, abstractMarkdown } = await import('../../test/corpus/kb/scifact-documents.ts');

  const corpusFile = path.join(SCIFACT, 'corpus.jsonl');
  const split = fs.existsSync(path.join(SCIFACT, 'qrels.test.tsv')) ? 'test' : 'train';
  const queriesFile = path.join(SCIFACT, `queries.${split}.jsonl`);
  const qrelsFile = path.join(SCIFACT, `qrels.${split}.tsv`);
  const [allDocs, queries, qrels] = await Promise.all([readCorpus(corpusFile), readQueries(queriesFile), readQrels(qrelsFile)]);
  // KB_BENCH_DOCS: a smoke run on the first N abstracts (its nDCG numbers mean nothing).
  const docs = allDocs.slice(0, Number(process.env.KB_BENCH_DOCS ?? allDocs.length));
  const judged = queries.filter((q) => qrels.has(q.id)).slice(0, Number(process.env.KB_BENCH_QUERIES ?? Infinity));
  const meanNdcg = (ranked: Map<string, string[]>) =>
    Math.round((judged.reduce((s, q) => s + ndcgAt(ranked.get(q.id) ?? [], qrels.get(q.id)!, 10), 0) / judged.length) * 10_000) / 10_000;
  console.error(`SciFact: ${docs.length} documents, ${judged.length} judged ${split} queries; cpus ${os.cpus().length}, load ${os.loadavg().map(r2).join(' ')}`);

  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-bench-'));
  const allowed = path.join(base, 'files');
  const dataDir = path.join(base, 'data');
  fs.mkdirSync(allowed);
  try {
    // Files: abstracts; the PDF; replicated large files; load-phase folders.
    const sciDir = writeAbstracts(path.join(allowed, 'scifact'), docs);
    fs.mkdirSync(path.join(allowed, 'pdf'));
    fs.copyFileSync(PDF_400, path.join(allowed, 'pdf', path.basename(PDF_400)));
    const replicate = (dir: string, copies: number) => {
      fs.mkdirSync(dir, { recursive: true });
      for (let c = 0; c < copies; c++) {
        for (let f = 0; f * PER_FILE < docs.length; f++) {
          const part = docs.slice(f * PER_FILE, (f + 1) * PER_FILE);
          const md = part.map((d) => abstractMarkdown({ title: `${d.title} (copy ${c})`, text: `${d.text} Copy ${c} of ${d.id}.` }).replace(/^# /, '## ')).join('\n');
          fs.writeFileSync(path.join(dir, `copy-${c}-part-${f}.md`), md);
        }
      }
      return dir;
    };
    const dir10k = replicate(path.join(allowed, 'c10k'), 2);
    const dir100k = replicate(path.join(allowed, 'c100k'), COPIES);
    const loadDirs = Array.from({ length: LOAD_JOBS }, (_, j) => {
      const d = path.join(allowed, 'load', `job-${j}`);
      fs.mkdirSync(d, { recursive: true });
      for (let k = 0; k < LOAD_FILES_PER_JOB; k++) {
        const doc = docs[(j * LOAD_FILES_PER_JOB + k) % docs.length];
        fs.writeFileSync(path.join(d, `load-${j}-${k}.md`), abstractMarkdown({ title: `${doc.title} (load ${j})`, text: doc.text }));
      }
      return d;
    });

    // Start-up baseline: a server on an empty data folder (tsx loading, app and services).
    const empty = await startServer(path.join(base, 'empty-data'), allowed);
    const emptyFirst = performance.now();
    await api(empty.base, 'GET', '/v1/collections');
    row('start-up baseline: fork -> listening, empty DATA_DIR', `${Math.round(empty.listenMs)} ms`, `first GET /v1/collections ${Math.round(performance.now() - emptyFirst)} ms`);
    await stopServer(empty);

    let server = await startServer(dataDir, allowed);
    const S = () => server.base;
    console.error(`server listening after ${Math.round(server.listenMs)} ms`);
    const rssStart = await serverRssAfterGc(server);

    // 1. Ingestion.
    console.error('1. ingestion');
    for (const n of ['scifact', 'pdf400', 'c10k', 'c100k', 'load']) {
      const r = await api(S(), 'POST', '/v1/collections', { name: n });
      if (r.status !== 201) throw new Error(`create ${n}: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const sci = await ingestPaths(S(), 'scifact', [sciDir]);
    const sciStats = await collectionStats(S(), 'scifact');
    row(`SciFact ingest (${docs.length} files by path, one job)`, `${r1(docs.length / (sci.ms / 1000))} docs/s, ${r1(sciStats.chunks / (sci.ms / 1000))} chunks/s`, `${sci.job.status}, ${sciStats.documents} docs, ${sciStats.chunks} chunks, ${r1(sci.ms / 1000)} s`);
    const pdf = await ingestPaths(S(), 'pdf400', [path.join(allowed, 'pdf')]);
    const pdfStats = await collectionStats(S(), 'pdf400');
    row('400-page PDF ingest', `${r1(pdfStats.pages / (pdf.ms / 1000))} pages/s`, `${pdf.job.status}, ${pdfStats.pages} pages, ${pdfStats.chunks} chunks, ${r1(pdf.ms / 1000)} s${pdf.job.items[0]?.error ? ` error ${pdf.job.items[0].error.code}` : ''}`);
    const rssBefore = await serverRssAfterGc(server);
    const c10 = await ingestPaths(S(), 'c10k', [dir10k]);
    const c10Stats = await collectionStats(S(), 'c10k');
    row('10k collection ingest (500 abstracts a file)', `${r1(c10Stats.chunks / (c10.ms / 1000))} chunks/s`, `${c10.job.status}, ${c10Stats.documents} docs, ${c10Stats.chunks} chunks`);
    const rssMid = await serverRssAfterGc(server);
    const c100 = await ingestPaths(S(), 'c100k', [dir100k]);
    const c100Stats = await collectionStats(S(), 'c100k');
    row('100k collection ingest (500 abstracts a file)', `${r1(c100Stats.chunks / (c100.ms / 1000))} chunks/s`, `${c100.job.status}, ${c100Stats.documents} docs, ${c100Stats.chunks} chunks, ${r1(c100.ms / 1000)} s`);
    // Indexes are opened by ingestion already (applyCommit) or by the first search: search once, then measure.
    await api(S(), 'POST', '/v1/collections/c100k/search', { query: 'warm up', mode: 'lexical' });
    const rssAfter = await serverRssAfterGc(server);
    row('server RSS per 100k chunks (after GC)', `${r1(((rssAfter - rssMid) / c100Stats.chunks) * 100_000)} MB`, `RSS ${r1(rssStart)} MB at start, ${r1(rssBefore)} before the 10k/100k collections, ${r1(rssAfter)} after`);

    // 2. Latency via REST.
    console.error('2. query latency');
    const restLatency = async (name: string, topK: number, collect?: Map<string, string[]>) => {
      const lat: number[] = [];
      let errors = 0;
      let none = 0;
      for (const q of judged) {
        const t0 = performance.now();
        const r = await api(S(), 'POST', `/v1/collections/${name}/search`, { query: q.text, mode: 'lexical', top_k: topK });
        lat.push(performance.now() - t0);
        if (r.status !== 200) {
          errors++;
          continue;
        }
        if (r.body.confidence === 'none') none++;
        collect?.set(q.id, rankDocuments(r.body.results));
      }
      return { p50: pct(lat, 50), p95: pct(lat, 95), errors, none };
    };
    for (const [name, stats] of [['scifact', sciStats], ['c10k', c10Stats], ['c100k', c100Stats]] as const) {
      await api(S(), 'POST', `/v1/collections/${name}/search`, { query: 'warm up', mode: 'lexical' });
      const l = await restLatency(name, 10);
      row(`REST search p50/p95, ${stats.chunks} chunks (${name}), top_k 10`, `${r2(l.p50)} / ${r2(l.p95)} ms`, `${l.errors} errors, ${l.none} answers with confidence none`);
    }
    const collRanked = new Map<string, string[]>();
    // The REST schema caps top_k at 20 (MAX_TOP_K); documents are ranked by their best chunk among those.
    const q50 = await restLatency('scifact', 20, collRanked);
    const ndcgColl = meanNdcg(collRanked);
    row('REST search p50/p95, scifact, top_k 20 (nDCG pass)', `${r2(q50.p50)} / ${r2(q50.p95)} ms`, `${q50.errors} errors, ${q50.none} of ${judged.length} answers had confidence none (no results)`);

    // 4. Load: 20 ingestion jobs + 32 concurrent searches; /health polled meanwhile.
    console.error('4. load');
    let loadRunning = true;
    const health: number[] = [];
    let healthErrors = 0;
    let peakRss = 0;
    const poller = (async () => {
      while (loadRunning) {
        const t0 = performance.now();
        const r = await fetch(S() + '/health').catch(() => null);
        health.push(performance.now() - t0);
        if (!r || r.status !== 200) healthErrors++;
        await r?.arrayBuffer();
        peakRss = Math.max(peakRss, treeRssMb(server.proc.pid!));
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    let searchErrors = 0;
    let searches = 0;
    const searchLat: number[] = [];
    const searchers = Array.from({ length: LOAD_SEARCHERS }, async (_, i) => {
      let k = i;
      while (loadRunning) {
        const q = judged[k++ % judged.length];
        const t0 = performance.now();
        const r = await api(S(), 'POST', '/v1/collections/c100k/search', { query: q.text, mode: 'lexical', top_k: 10 }).catch(() => ({ status: 0, body: null }));
        searchLat.push(performance.now() - t0);
        searches++;
        if (r.status !== 200) searchErrors++;
      }
    });
    const tLoad = performance.now();
    const submitted = await Promise.all(loadDirs.map((d) => api(S(), 'POST', '/v1/collections/load/documents', { paths: [d] })));
    const jobErrors = submitted.filter((r) => r.status !== 202).length;
    const ended = await Promise.all(submitted.filter((r) => r.status === 202).map((r) => waitJob(S(), r.body.id)));
    const loadMs = performance.now() - tLoad;
    loadRunning = false;
    await Promise.all([poller, ...searchers]);
    const failedDocs = ended.reduce((s, j) => s + j.counts.failed, 0);
    const loadStats = await collectionStats(S(), 'load');
    row(
      `load: ${LOAD_JOBS} jobs x ${LOAD_FILES_PER_JOB} files + ${LOAD_SEARCHERS} concurrent searches (c100k)`,
      `${jobErrors + failedDocs + searchErrors} errors`,
      `${jobErrors} refused jobs, ${failedDocs} failed documents, ${searchErrors} failed of ${searches} searches; statuses ${[...new Set(ended.map((j) => j.status))].join(',')}; ${loadStats.documents} docs in ${r1(loadMs / 1000)} s`,
    );
    row('load: /health latency max / p95', `${r1(Math.max(...health))} / ${r1(pct(health, 95))} ms`, `${health.length} probes, ${healthErrors} errors; target <= 100 ms`);
    row('load: search p50 / p95 under load', `${r1(pct(searchLat, 50))} / ${r1(pct(searchLat, 95))} ms`);
    row('load: peak RSS of the server process tree', `${r1(peakRss)} MB`);

    // 5. Start-up with the 100k collection on disk.
    console.error('5. start-up');
    await stopServer(server);
    server = await startServer(dataDir, allowed);
    const tFirst = performance.now();
    const first = await api(S(), 'POST', '/v1/collections/c100k/search', { query: judged[0].text, mode: 'lexical', top_k: 10 });
    const firstMs = performance.now() - tFirst;
    row(
      'start-up: fork -> first search answered (100k chunks on disk)',
      `${Math.round(server.listenMs + firstMs)} ms`,
      `listening after ${Math.round(server.listenMs)} ms (incl. tsx loading), first search ${Math.round(firstMs)} ms (status ${first.status}, ${first.body?.results?.length ?? 0} hits); target <= 2,000 ms`,
    );
    await stopServer(server);

    // 3b. In-process searchCollection over the same data folder.
    console.error('3b. in-process search');
    const { KbStore } = await import('../../src/kb/kb-store.ts');
    const { CollectionIndexes } = await import('../../src/kb/collection-index.ts');
    const { searchCollection } = await import('../../src/kb/collection-search.ts');
    const store = new KbStore(path.join(dataDir, 'kb'));
    for (const name of ['scifact', 'c10k', 'c100k']) {
      const c = store.getCollection(name)!;
      (globalThis as { gc?: () => void }).gc?.();
      const rss0 = process.memoryUsage().rss;
      const to = performance.now();
      const ix = await CollectionIndexes.open(path.join(dataDir, 'kb', 'indexes', String(c.id)), c, store);
      const openMs = performance.now() - to;
      (globalThis as { gc?: () => void }).gc?.();
      const rssDelta = (process.memoryUsage().rss - rss0) / 1048576;
      const deps = { collection: c, store, indexes: { lexical: ix.lexical, dense: ix.dense }, models: null };
      const lat: number[] = [];
      const ranked = new Map<string, string[]>();
      const ranked50 = new Map<string, string[]>();
      for (const q of judged) {
        const t0 = performance.now();
        const r = await searchCollection(deps, { query: q.text, mode: 'lexical', top_k: name === 'scifact' ? 20 : 10 }, AbortSignal.timeout(60_000));
        lat.push(performance.now() - t0);
        if (name !== 'scifact') continue;
        ranked.set(q.id, rankDocuments(r.results));
        const r50 = await searchCollection(deps, { query: q.text, mode: 'lexical', top_k: 50 }, AbortSignal.timeout(60_000));
        ranked50.set(q.id, rankDocuments(r50.results));
      }
      row(
        `in-process searchCollection p50/p95, ${ix.lexical.size} chunks (${name})`,
        `${r2(pct(lat, 50))} / ${r2(pct(lat, 95))} ms`,
        `indexes opened in ${Math.round(openMs)} ms (from ${String(ix.stats().source)}), RSS ${rssDelta >= 0 ? '+' : ''}${r1(rssDelta)} MB${name === 'scifact' ? `, top_k 20: nDCG@10 ${meanNdcg(ranked)}; top_k 50 (in-process limit): nDCG@10 ${meanNdcg(ranked50)}` : ''}`,
      );
    }
    store.close();

    // 6. Quality side by side.
    console.error('6. quality');
    const ev = await runEval({ corpus: corpusFile, queries: queriesFile, qrels: qrelsFile, mode: 'lexical' });
    const fts = (tokenize: string) => {
      const db = new Database(':memory:');
      const tb = performance.now();
      db.exec(`CREATE VIRTUAL TABLE d USING fts5(id UNINDEXED, title, text, tokenize = '${tokenize}')`);
      const ins = db.prepare('INSERT INTO d (id, title, text) VALUES (?, ?, ?)');
      db.transaction(() => docs.forEach((d) => ins.run(d.id, d.title, d.text)))();
      const buildMs = performance.now() - tb;
      const sel = db.prepare('SELECT id FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 10');
      const ranked = new Map<string, string[]>();
      const lat: number[] = [];
      for (const q of judged) {
        // Any query word (OR of quoted tokens; FTS5's default is AND of all, which finds almost nothing for a claim).
        const words = [...new Set(q.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
        const match = words.map((w) => `"${w}"`).join(' OR ');
        const t0 = performance.now();
        const ids = match ? (sel.all(match) as Array<{ id: string }>).map((r) => r.id) : [];
        lat.push(performance.now() - t0);
        ranked.set(q.id, ids);
      }
      db.close();
      return { ndcg: meanNdcg(ranked), p50: pct(lat, 50), p95: pct(lat, 95), buildMs };
    };
    const ftsDefault = fts('unicode61');
    const ftsPorter = fts('porter unicode61');
    row(`nDCG@10 SciFact ${split}: runEval lexical (npm run eval)`, ev.ndcg_at_10, `mean query ${ev.query_ms_mean} ms, index ${ev.index_ms} ms, ${ev.analyzer}`);
    row(`nDCG@10 SciFact ${split}: our collection search (REST, best chunk per document)`, ndcgColl, `${r2(ndcgColl - ev.ndcg_at_10)} vs runEval; REST p50 ${r2(q50.p50)} ms`);
    row(`nDCG@10 SciFact ${split}: FTS5 bm25(), tokenize 'unicode61' (default)`, ftsDefault.ndcg, `p50/p95 ${r2(ftsDefault.p50)} / ${r2(ftsDefault.p95)} ms in-process, build ${Math.round(ftsDefault.buildMs)} ms`);
    row(`nDCG@10 SciFact ${split}: FTS5 bm25(), tokenize 'porter unicode61'`, ftsPorter.ndcg, `p50/p95 ${r2(ftsPorter.p50)} / ${r2(ftsPorter.p95)} ms in-process, build ${Math.round(ftsPorter.buildMs)} ms`);
    row('ratio: our nDCG@10 / FTS5 porter', r2(ndcgColl / ftsPorter.ndcg), `runEval / FTS5 porter ${r2(ev.ndcg_at_10 / ftsPorter.ndcg)}`);

    console.log(`\n| measure | value | notes |\n|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}`);
    console.log(`\n(${os.cpus().length} CPUs, load average at the end ${os.loadavg().map(r2).join(' ')})`);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--serve') await serve();
else await main();
