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
 *      The server's own event-loop delay (monitorEventLoopDelay, and every turn that ran > 50 ms)
 *      is reported next to the client-side /health numbers;
 *   5. start-up: the server stopped, a new one on the same DATA_DIR, time to its first search on the
 *      100k-chunk collection (target <= 2 s), through tsx and through the built dist/ (what
 *      `npm start` runs: bin/rag-document-server.js), each next to the same server on an empty
 *      DATA_DIR (module loading), and in-process: store open, snapshot read, deserialize;
 *   6. quality side by side, same run: nDCG@10 on SciFact for SQLite FTS5 bm25() configured as
 *      docs-mcp-server (arabold/docs-mcp-server) configures it (db/migrations/009-add-pages-table.sql:
 *      fts5(content, title, url, path, tokenize='porter unicode61'); DocumentStore.findByContent:
 *      bm25(documents_fts, 10.0, 1.0, 5.0, 1.0), query `"<whole query>" OR ("w1" OR "w2" ...)` with
 *      words split on white space), plus labeled variants (one text column, any-word query, with the
 *      porter and the default unicode61 tokenizer), our collection search (documents ranked by their
 *      best chunk; the collection has chunk_size 5000 as test/corpus/kb/scifact-collection.test.ts,
 *      so one chunk per abstract) and runEval lexical (what `npm run eval` prints), with latencies.
 *
 *   npm run bench:kb            (node --expose-gc --import tsx; EVAL_DIR, CORPUS_DIR as the corpus suite; KB_BENCH_COPIES=14 for ~100k)
 *   KB_BENCH_DIR=/tmp/kbb       keep files and data there; a later run reuses the ingested collections
 *   KB_BENCH_PHASES=load,startup  run only some of ingest,latency,load,startup,inprocess,quality
 *                               (without ingest: KB_BENCH_DIR must hold an ingested run)
 *   KB_BENCH_CPU_PROF=/tmp/prof the server runs under node --cpu-prof (profile written at its exit;
 *                               read with scripts/bench/kb-long-tasks.ts)
 *   KB_BENCH_SERVER_FLAGS='--trace-gc'  more node flags for the server
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
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
const KEEP_DIR = process.env.KB_BENCH_DIR ? path.resolve(process.env.KB_BENCH_DIR) : null;
const PHASES = new Set((process.env.KB_BENCH_PHASES ?? 'ingest,latency,load,startup,inprocess,quality').split(',').map((x) => x.trim()));
const CPU_PROF = process.env.KB_BENCH_CPU_PROF ? path.resolve(process.env.KB_BENCH_CPU_PROF) : null;
/** KB_BENCH_SERVER_FLAGS: more node flags for the server child (e.g. --trace-gc). */
const SERVER_FLAGS = (process.env.KB_BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean);
/** The server's event loop: a turn that delays a 10 ms timer by more than this is logged. */
const LONG_TURN_MS = 50;

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
  // The real disk probe, timed: /health awaits it when its 5 s old result is refreshed.
  const { realDiskProbe } = await import('../../src/util/disk-health.ts');
  const probeMs: number[] = [];
  const diskProbe = {
    freeBytes: (dir: string) => realDiskProbe.freeBytes(dir),
    async writeProbe(dir: string) {
      const t = performance.now();
      try {
        await realDiskProbe.writeProbe(dir);
      } finally {
        if (probeMs.length < 10_000) probeMs.push(performance.now() - t);
      }
    },
  };
  const services = createServices(config, { startModels: false, diskProbe });
  const app = await buildApp({ config, services });
  await app.listen({ host: '127.0.0.1', port: 0 });
  // Event-loop delay as the server sees it: a histogram, and each late timer (a long turn) with its time.
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const hist = monitorEventLoopDelay({ resolution: 10 });
  hist.enable();
  // `hr`: the monotonic clock in µs (V8's CPU profile timestamps), to find what ran in a long turn.
  // `cpu`: the CPU time the process used meanwhile (ms): on a machine shared with other work a turn
  // is long also while the process waits for a core; `cpu` is what the turn itself needed.
  const long: Array<{ at: number; ms: number; hr: number; cpu: number }> = [];
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const t = performance.now();
    const lag = t - last - 10;
    const cpu = process.cpuUsage(lastCpu);
    if (lag > LONG_TURN_MS && long.length < 10_000) {
      long.push({ at: Math.round(t), ms: Math.round(lag), hr: Number(process.hrtime.bigint() / 1000n), cpu: Math.round((cpu.user + cpu.system) / 1000) });
    }
    last = t;
    lastCpu = process.cpuUsage();
  }, 10).unref();
  process.send!({ port: (app.server.address() as { port: number }).port });
  process.on('message', (m: { gc?: boolean; loop?: 'reset' | 'read' }) => {
    if (m.loop === 'reset') {
      hist.reset();
      long.length = 0;
      probeMs.length = 0;
      process.send!({ loop: null });
    } else if (m.loop === 'read') {
      process.send!({ loop: { max: hist.max / 1e6, p99: hist.percentile(99) / 1e6, p50: hist.percentile(50) / 1e6, long: [...long], diskProbeMs: [...probeMs] } });
    }
    if (!m.gc) return;
    (globalThis as { gc?: () => void }).gc?.();
    process.send!({ rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed });
  });
  // Close, clean up and exit when the parent goes; a failure there still ends the process.
  process.on('disconnect', () => {
    void (async () => {
      await app.close();
      await services.close();
      process.exit(0);
    })().catch((err: unknown) => {
      process.stderr.write(`shutdown failed: ${String(err)}\n`);
      process.exit(1);
    });
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
    execArgv: ['--expose-gc', '--import', 'tsx', ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []), ...SERVER_FLAGS],
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

interface LoopStats {
  max: number;
  p99: number;
  p50: number;
  long: Array<{ at: number; ms: number; hr: number; cpu: number }>;
  /** Each disk write probe (create, write, fsync, remove) the server ran, ms. */
  diskProbeMs: number[];
}
/** Resets ('reset') or reads ('read') the server's event-loop delay numbers. */
async function serverLoop(s: Server, what: 'reset' | 'read'): Promise<LoopStats | null> {
  const reply = new Promise<LoopStats | null>((r) => s.proc.once('message', (m) => r((m as { loop: LoopStats | null }).loop)));
  s.proc.send({ loop: what });
  return reply;
}

/**
 * The built server (`node bin/rag-document-server.js`, what `npm start` runs) on `dataDir`: ms from
 * spawn to the first 200 of /health, then to the answer of the first search (when `search` is given).
 */
async function startBuilt(
  dataDir: string,
  allowedDir: string,
  search?: { collection: string; query: string },
): Promise<{ healthMs: number; firstMs: number | null; status: number | null; hits: number; healthCpuMs: number; firstCpuMs: number | null }> {
  const port = await new Promise<number>((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin', 'rag-document-server.js'), '--port', String(port)], {
    cwd: os.tmpdir(), // no .env of the checkout
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      ALLOWED_DIRS: allowedDir,
      RATE_LIMIT_RPM: '0',
      LOG_LEVEL: 'silent',
      MODEL_DOWNLOADS: 'never',
      MODELS_DIR: path.join(dataDir, 'no-models'),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`built server exited (${proc.exitCode})`);
      const ok = await fetch(base + '/health').then((r) => r.status === 200, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const healthMs = performance.now() - t0;
    const healthCpuMs = cpuMsOf(proc.pid!);
    if (!search) return { healthMs, firstMs: null, status: null, hits: 0, healthCpuMs, firstCpuMs: null };
    const r = await api(base, 'POST', `/v1/collections/${search.collection}/search`, { query: search.query, mode: 'lexical', top_k: 10 });
    return { healthMs, firstMs: performance.now() - t0, status: r.status, hits: r.body?.results?.length ?? 0, healthCpuMs, firstCpuMs: cpuMsOf(proc.pid!) };
  } finally {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
}

/**
 * CPU time a process has used so far (user + system, all its threads; ms). On a machine shared with
 * other work, wall time includes waiting for a core; this is what the start-up itself cost.
 */
function cpuMsOf(pid: number): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
  } catch {
    return NaN;
  }
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

/** A REST answer read as JSON: the benchmark walks whatever fields it reports. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of the API, checked by the tests, not here
type Json = any;

async function api<T = Json>(base: string, method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(base + url, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

async function ingestPaths(base: string, name: string, paths: string[]): Promise<{ job: Json; ms: number }> {
  const t0 = performance.now();
  const r = await api(base, 'POST', `/v1/collections/${name}/documents`, { paths });
  if (r.status !== 202) throw new Error(`ingest ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  const job = await waitJob(base, r.body.id ?? r.body.job_id);
  return { job, ms: performance.now() - t0 };
}

async function waitJob(base: string, id: string): Promise<Json> {
  for (;;) {
    const r = await api(base, 'GET', `/v1/jobs/${id}`);
    if (['succeeded', 'partial', 'failed', 'cancelled'].includes(r.body.status)) return r.body;
    await new Promise((res) => setTimeout(res, 200));
  }
}

async function collectionStats(base: string, name: string): Promise<Json> {
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

  const base = KEEP_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'kb-bench-'));
  const allowed = path.join(base, 'files');
  const dataDir = path.join(base, 'data');
  fs.mkdirSync(allowed, { recursive: true });
  try {
    // Files: abstracts; the PDF; replicated large files; load-phase folders.
    const sciDir = writeAbstracts(path.join(allowed, 'scifact'), docs);
    fs.mkdirSync(path.join(allowed, 'pdf'), { recursive: true });
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
    const emptyDir = path.join(base, 'empty-data');
    fs.rmSync(emptyDir, { recursive: true, force: true });
    const empty = await startServer(emptyDir, allowed);
    const emptyFirst = performance.now();
    await api(empty.base, 'GET', '/v1/collections');
    row('start-up baseline: fork -> listening, empty DATA_DIR', `${Math.round(empty.listenMs)} ms`, `first GET /v1/collections ${Math.round(performance.now() - emptyFirst)} ms`);
    await stopServer(empty);

    let server = await startServer(dataDir, allowed);
    const S = () => server.base;
    console.error(`server listening after ${Math.round(server.listenMs)} ms`);
    const rssStart = await serverRssAfterGc(server);

    // 1. Ingestion.
    const stats: Record<string, Json> = {};
    if (PHASES.has('ingest')) {
      console.error('1. ingestion');
      for (const n of ['scifact', 'pdf400', 'c10k', 'c100k']) await api(S(), 'DELETE', `/v1/collections/${n}`);
      for (const n of ['scifact', 'pdf400', 'c10k', 'c100k']) {
        // SciFact with chunk_size 5000 (one chunk per abstract), as the corpus test: nDCG equals runEval's.
        const r = await api(S(), 'POST', '/v1/collections', n === 'scifact' ? { name: n, chunk_size: 5000 } : { name: n });
        if (r.status !== 201) throw new Error(`create ${n}: ${r.status} ${JSON.stringify(r.body)}`);
      }
      const sci = await ingestPaths(S(), 'scifact', [sciDir]);
      const sciStats = await collectionStats(S(), 'scifact');
      row(`SciFact ingest (${docs.length} files by path, one job, chunk_size 5000)`, `${r1(docs.length / (sci.ms / 1000))} docs/s, ${r1(sciStats.chunks / (sci.ms / 1000))} chunks/s`, `${sci.job.status}, ${sciStats.documents} docs, ${sciStats.chunks} chunks, ${r1(sci.ms / 1000)} s`);
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
    }
    for (const n of ['scifact', 'c10k', 'c100k']) {
      stats[n] = await collectionStats(S(), n);
      if (!stats[n]) throw new Error(`collection ${n} missing: run with the ingest phase first (KB_BENCH_DIR keeps it)`);
    }

    // 2. Latency via REST.
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
    if (PHASES.has('latency')) {
      console.error('2. query latency');
      for (const name of ['scifact', 'c10k', 'c100k']) {
        await api(S(), 'POST', `/v1/collections/${name}/search`, { query: 'warm up', mode: 'lexical' });
        const l = await restLatency(name, 10);
        row(`REST search p50/p95, ${stats[name].chunks} chunks (${name}), top_k 10`, `${r2(l.p50)} / ${r2(l.p95)} ms`, `${l.errors} errors, ${l.none} answers with confidence none`);
      }
    }
    const collRanked = new Map<string, string[]>();
    let q50: Awaited<ReturnType<typeof restLatency>> | null = null;
    if (PHASES.has('latency') || PHASES.has('quality')) {
      // The REST schema caps top_k at 20 (MAX_TOP_K); documents are ranked by their best chunk among those.
      q50 = await restLatency('scifact', 20, collRanked);
      row('REST search p50/p95, scifact, top_k 20 (nDCG pass)', `${r2(q50.p50)} / ${r2(q50.p95)} ms`, `${q50.errors} errors, ${q50.none} of ${judged.length} answers had confidence none (no results)`);
    }

    // 4. Load: 20 ingestion jobs + 32 concurrent searches; /health polled meanwhile.
    if (PHASES.has('load')) {
      console.error('4. load');
      await api(S(), 'DELETE', '/v1/collections/load');
      const created = await api(S(), 'POST', '/v1/collections', { name: 'load' });
      if (created.status !== 201) throw new Error(`create load: ${created.status} ${JSON.stringify(created.body)}`);
      await api(S(), 'POST', '/v1/collections/c100k/search', { query: 'warm up', mode: 'lexical' });
      await serverLoop(server, 'reset');
      let loadRunning = true;
      let peakRss = 0;
      const rssPoll = setInterval(() => (peakRss = Math.max(peakRss, treeRssMb(server.proc.pid!))), 100);
      // /health is polled from a process of its own: the 32 searchers' JSON work in this one would
      // delay its timers and responses and count as server latency.
      const prober = fork(process.argv[1]!, ['--probe', S()], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      await new Promise((r) => prober.once('message', r));
      const probed = new Promise<{ health: Array<{ at: number; ms: number }>; errors: number }>((r) => prober.once('message', (m) => r(m as never)));
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
      prober.send('stop');
      const { health, errors: healthErrors } = await probed;
      clearInterval(rssPoll);
      await Promise.all(searchers);
      const loop = (await serverLoop(server, 'read'))!;
      if (CPU_PROF) fs.writeFileSync(path.join(CPU_PROF, `long-turns-${server.proc.pid}.json`), JSON.stringify(loop.long));
      const failedDocs = ended.reduce((s, j) => s + j.counts.failed, 0);
      const loadStats = await collectionStats(S(), 'load');
      const hms = health.map((h) => h.ms);
      row(
        `load: ${LOAD_JOBS} jobs x ${LOAD_FILES_PER_JOB} files + ${LOAD_SEARCHERS} concurrent searches (c100k)`,
        `${jobErrors + failedDocs + searchErrors} errors`,
        `${jobErrors} refused jobs, ${failedDocs} failed documents, ${searchErrors} failed of ${searches} searches; statuses ${[...new Set(ended.map((j) => j.status))].join(',')}; ${loadStats.documents} docs in ${r1(loadMs / 1000)} s`,
      );
      row('load: /health latency max / p95', `${r1(Math.max(...hms))} / ${r1(pct(hms, 95))} ms`, `${health.length} probes, ${healthErrors} errors; target <= 100 ms`);
      const slow = health.filter((h) => h.ms > 100).map((h) => `${Math.round(h.at)}ms:${Math.round(h.ms)}`);
      if (slow.length) console.error(`  /health over 100 ms at (ms into the load: latency) ${slow.join(' ')}`);
      row(
        'load: server event-loop delay max / p99 / p50',
        `${r1(loop.max)} / ${r1(loop.p99)} / ${r1(loop.p50)} ms`,
        `${loop.long.length} turns > ${LONG_TURN_MS} ms${loop.long.length ? `, longest ${[...loop.long].sort((a, b) => b.ms - a.ms).slice(0, 8).map((l) => `${l.ms} (cpu ${l.cpu})`).join(', ')} ms` : ''}`,
      );
      const cpus = loop.long.map((l) => l.cpu).sort((a, b) => b - a);
      row(
        'load: server CPU time inside its long turns, max / p95',
        `${cpus.length ? cpus[0] : 0} / ${cpus.length ? pct(cpus, 95) : 0} ms`,
        `process CPU (all its threads) between two ticks of a 10 ms timer that fired > ${LONG_TURN_MS} ms late; ${cpus.filter((c) => c > 100).length} of them used > 100 ms`,
      );
      const probes = [...loop.diskProbeMs].sort((a, b) => a - b);
      row(
        "load: /health's disk write probe (create, write, fsync, remove) max / median",
        probes.length ? `${r1(probes.at(-1)!)} / ${r1(pct(probes, 50))} ms` : 'none',
        `${probes.length} probes: the /health that finds the last result older than 5 s awaits a new one (src/util/disk-health.ts)`,
      );
      row('load: search p50 / p95 under load', `${r1(pct(searchLat, 50))} / ${r1(pct(searchLat, 95))} ms`);
      row('load: peak RSS of the server process tree', `${r1(peakRss)} MB`);
    }

    // 5. Start-up with the 100k collection on disk.
    await stopServer(server);
    if (PHASES.has('startup')) {
      console.error('5. start-up');
      server = await startServer(dataDir, allowed);
      const tFirst = performance.now();
      const first = await api(S(), 'POST', '/v1/collections/c100k/search', { query: judged[0].text, mode: 'lexical', top_k: 10 });
      const firstMs = performance.now() - tFirst;
      row(
        'start-up (tsx): fork -> first search answered (100k chunks on disk)',
        `${Math.round(server.listenMs + firstMs)} ms`,
        `listening after ${Math.round(server.listenMs)} ms (incl. tsx loading), first search ${Math.round(firstMs)} ms (status ${first.status}, ${first.body?.results?.length ?? 0} hits); target <= 2,000 ms`,
      );
      await stopServer(server);
      if (fs.existsSync(path.join(ROOT, 'dist', 'src', 'server.js'))) {
        const emptyBuilt = await startBuilt(emptyDir, allowed);
        const built = await startBuilt(dataDir, allowed, { collection: 'c100k', query: judged[0].text });
        row(
          'start-up (dist, npm start): spawn -> first search answered (100k chunks on disk)',
          `${Math.round(built.firstMs!)} ms`,
          `/health 200 after ${Math.round(built.healthMs)} ms (${Math.round(emptyBuilt.healthMs)} ms on an empty DATA_DIR), first search ${Math.round(built.firstMs! - built.healthMs)} ms after it (status ${built.status}, ${built.hits} hits); target <= 2,000 ms`,
        );
        row(
          'start-up (dist): server CPU time to /health 200 / to the first answer',
          `${Math.round(built.healthCpuMs)} / ${Math.round(built.firstCpuMs!)} ms`,
          `${Math.round(emptyBuilt.healthCpuMs)} ms to /health on an empty DATA_DIR; what the start-up costs without the wait for a core (load average ${os.loadavg().map(r2).join(' ')})`,
        );
      } else {
        row('start-up (dist)', 'not measured', 'no dist/: run npm run build first');
      }
    }

    // 3b. In-process searchCollection over the same data folder (and the start-up parts, timed one by one).
    if (PHASES.has('inprocess') || PHASES.has('startup')) {
      console.error('3b. in-process search');
      const tImport = performance.now();
      const { KbStore } = await import('../../src/kb/kb-store.ts');
      const { CollectionIndexes } = await import('../../src/kb/collection-index.ts');
      const { searchCollection } = await import('../../src/kb/collection-search.ts');
      const { CollectionLexicalIndex } = await import('../../src/kb/lexical-index.ts');
      const { Analyzer, SERVER_ANALYZER } = await import('../../src/retrieval/tokenizer.ts');
      const importMs = performance.now() - tImport;
      const tStore = performance.now();
      const store = new KbStore(path.join(dataDir, 'kb'));
      const storeMs = performance.now() - tStore;
      row('start-up parts: open KbStore (migrations, checks)', `${r1(storeMs)} ms`, `imports of the kb modules ${Math.round(importMs)} ms (already loaded by the bench in part)`);
      const names = PHASES.has('inprocess') ? ['scifact', 'c10k', 'c100k'] : ['c100k'];
      for (const name of names) {
        const c = store.getCollection(name)!;
        const ixDir = path.join(dataDir, 'kb', 'indexes', String(c.id));
        if (name === 'c100k' && fs.existsSync(path.join(ixDir, 'lexical.bin'))) {
          const tr = performance.now();
          const buf = fs.readFileSync(path.join(ixDir, 'lexical.bin'));
          const readMs = performance.now() - tr;
          const td = performance.now();
          const lx = CollectionLexicalIndex.deserialize(buf, new Analyzer(SERVER_ANALYZER)); // the analyzer the server builds collections with
          const deMs = performance.now() - td;
          row('start-up parts: c100k lexical.bin read / deserialize (one synchronous run)', `${r1(readMs)} / ${r1(deMs)} ms`, `${r1(buf.length / 1048576)} MB, ${lx.size} chunks`);
        }
        (globalThis as { gc?: () => void }).gc?.();
        const rss0 = process.memoryUsage().rss;
        const to = performance.now();
        const ix = await CollectionIndexes.open(ixDir, c, store);
        const openMs = performance.now() - to;
        (globalThis as { gc?: () => void }).gc?.();
        const rssDelta = (process.memoryUsage().rss - rss0) / 1048576;
        const deps = { collection: c, store, indexes: { lexical: ix.lexical, dense: ix.dense }, models: null };
        const lat: number[] = [];
        const ranked = new Map<string, string[]>();
        const ranked50 = new Map<string, string[]>();
        const qs = PHASES.has('inprocess') ? judged : judged.slice(0, 1);
        for (const q of qs) {
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
          `indexes opened in ${Math.round(openMs)} ms (from ${String(ix.stats().source)}), first search ${r1(lat[0])} ms, RSS ${rssDelta >= 0 ? '+' : ''}${r1(rssDelta)} MB${name === 'scifact' ? `, top_k 20: nDCG@10 ${meanNdcg(ranked)}; top_k 50 (in-process limit): nDCG@10 ${meanNdcg(ranked50)}` : ''}`,
        );
      }
      store.close();
    }

    // 6. Quality side by side.
    if (PHASES.has('quality')) {
      console.error('6. quality');
      const ndcgColl = meanNdcg(collRanked);
      const ev = await runEval({ corpus: corpusFile, queries: queriesFile, qrels: qrelsFile, mode: 'lexical' });
      /**
       * One FTS5 table over the abstracts. 'docs-mcp-server': its columns (content, title, url, path)
       * filled as its Markdown pipeline fills them for one page (content: the chunk's text; title: the
       * page title; url: the file's URL; path: the heading path as JSON), its bm25 column weights and
       * its query (escapeFtsQuery). 'one column': text only, any quoted word of the query ORed.
       */
      const fts = (tokenize: string, shape: 'docs-mcp-server' | 'one column') => {
        const db = new Database(':memory:');
        const tb = performance.now();
        let sel: Database.Statement;
        if (shape === 'docs-mcp-server') {
          db.exec(`CREATE VIRTUAL TABLE documents_fts USING fts5(content, title, url, path, tokenize='${tokenize}')`);
          const ins = db.prepare('INSERT INTO documents_fts (rowid, content, title, url, path) VALUES (?, ?, ?, ?, ?)');
          db.transaction(() =>
            docs.forEach((d, i) => ins.run(i + 1, abstractMarkdown(d), d.title, `file://${path.join(sciDir, `${d.id}.md`)}`, JSON.stringify(d.title ? [d.title] : []))),
          )();
          sel = db.prepare('SELECT rowid AS r FROM documents_fts WHERE documents_fts MATCH ? ORDER BY bm25(documents_fts, 10.0, 1.0, 5.0, 1.0) LIMIT 10');
        } else {
          db.exec(`CREATE VIRTUAL TABLE d USING fts5(text, tokenize = '${tokenize}')`);
          const ins = db.prepare('INSERT INTO d (rowid, text) VALUES (?, ?)');
          db.transaction(() => docs.forEach((d, i) => ins.run(i + 1, `${d.title} ${d.text}`)))();
          sel = db.prepare('SELECT rowid AS r FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 10');
        }
        const buildMs = performance.now() - tb;
        const ranked = new Map<string, string[]>();
        const lat: number[] = [];
        let failed = 0;
        for (const q of judged) {
          let match: string;
          if (shape === 'docs-mcp-server') {
            // docs-mcp-server's DocumentStore.escapeFtsQuery, as it is.
            if (q.text.includes('"')) match = q.text.replace(/"/g, '""');
            else {
              const phrase = `"${q.text.replace(/"/g, '""')}"`;
              const terms = q.text.trim().split(/\s+/).filter((t) => t.length > 0);
              match = terms.length <= 1 ? phrase : `${phrase} OR (${terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' OR ')})`;
            }
          } else {
            // Any query word (OR of quoted tokens; FTS5's default is AND of all, which finds almost nothing for a claim).
            const words = [...new Set(q.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
            match = words.map((w) => `"${w}"`).join(' OR ');
          }
          const t0 = performance.now();
          let ids: string[] = [];
          try {
            ids = match ? (sel.all(match) as Array<{ r: number }>).map((r) => docs[r.r - 1]!.id) : [];
          } catch {
            failed++; // an FTS5 syntax error: docs-mcp-server would answer an error; no results here
          }
          lat.push(performance.now() - t0);
          ranked.set(q.id, ids);
        }
        db.close();
        return { ndcg: meanNdcg(ranked), p50: pct(lat, 50), p95: pct(lat, 95), buildMs, failed };
      };
      const ftsDms = fts('porter unicode61', 'docs-mcp-server');
      const ftsPorter = fts('porter unicode61', 'one column');
      const ftsDefault = fts('unicode61', 'one column');
      const note = (f: ReturnType<typeof fts>) => `p50/p95 ${r2(f.p50)} / ${r2(f.p95)} ms in-process, build ${Math.round(f.buildMs)} ms${f.failed ? `, ${f.failed} queries failed (FTS5 syntax)` : ''}`;
      row(`nDCG@10 SciFact ${split}: runEval lexical (npm run eval)`, ev.ndcg_at_10, `mean query ${ev.query_ms_mean} ms, index ${ev.index_ms} ms, ${ev.analyzer}`);
      row(`nDCG@10 SciFact ${split}: our collection search (REST, best chunk per document)`, ndcgColl, `${r2(ndcgColl - ev.ndcg_at_10)} vs runEval; REST p50 ${r2(q50!.p50)} ms`);
      row(`nDCG@10 SciFact ${split}: FTS5 as docs-mcp-server configures it (porter unicode61, 4 columns, bm25 10/1/5/1, phrase OR words)`, ftsDms.ndcg, note(ftsDms));
      row(`nDCG@10 SciFact ${split}: FTS5 variant, tokenize 'porter unicode61', one column, any word`, ftsPorter.ndcg, note(ftsPorter));
      row(`nDCG@10 SciFact ${split}: FTS5 variant, tokenize 'unicode61' (default), one column, any word`, ftsDefault.ndcg, note(ftsDefault));
      row('ratio: our nDCG@10 / FTS5 as docs-mcp-server', r2(ndcgColl / ftsDms.ndcg), `runEval / FTS5 docs-mcp-server ${r2(ev.ndcg_at_10 / ftsDms.ndcg)}; ours / FTS5 porter one column ${r2(ndcgColl / ftsPorter.ndcg)}`);
    }

    console.log(`\n| measure | value | notes |\n|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}`);
    console.log(`\n(${os.cpus().length} CPUs, load average at the end ${os.loadavg().map(r2).join(' ')})`);
  } finally {
    if (!KEEP_DIR) fs.rmSync(base, { recursive: true, force: true });
  }
}

/** The /health prober: GET every 50 ms until told to stop, then the latencies (ms since its start). */
async function probe(base: string): Promise<void> {
  const health: Array<{ at: number; ms: number }> = [];
  let errors = 0;
  let running = true;
  process.on('message', () => (running = false));
  // The first fetch of a process loads and connects undici: not the server's latency.
  await (await fetch(base + '/health')).arrayBuffer();
  process.send!('ready');
  const t00 = performance.now();
  while (running) {
    const t0 = performance.now();
    const r = await fetch(base + '/health').catch(() => null);
    await r?.arrayBuffer();
    health.push({ at: t0 - t00, ms: performance.now() - t0 });
    if (!r || r.status !== 200) errors++;
    await new Promise((res) => setTimeout(res, 50));
  }
  process.send!({ health, errors }, () => process.exit(0));
}

if (process.argv[2] === '--serve') await serve();
else if (process.argv[2] === '--probe') await probe(process.argv[3]!);
else await main();
