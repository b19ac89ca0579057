/**
 * Every benchmark of the project, in the order docs/benchmarks.md shows them. `npm run bench`
 * runs them all, `npm run bench -- <name> [args]` (or `npm run bench:<name> -- [args]`) one;
 * `npm run bench -- --check` verifies this list against the folder and package.json (a bench
 * file or a bench:* script missing here fails it).
 *
 * `report: 'section'` benchmarks build their own section with the shared harness (tables,
 * checks); `report: 'output'` ones print their own tables and the runner records what they
 * printed as their section. Either way a rerun replaces only that benchmark's section.
 */
import fs from 'node:fs';
import path from 'node:path';

const BENCH_FOLDER = import.meta.dirname;
const ROOT = path.resolve(BENCH_FOLDER, '..', '..');

export interface Benchmark {
  name: string;
  file: string;
  title: string;
  /** What it measures, one line (the report's contents table). */
  what: string;
  report: 'section' | 'output';
  /** What it needs beyond the checkout (the runner does not check; the benchmark says why it fails). */
  needs?: string;
}

export const BENCHMARKS: Benchmark[] = [
  // Per-document pipeline, each stage against what a Node user would pick instead.
  { name: 'extraction', file: 'extraction.bench.ts', title: 'Extraction throughput', what: 'each extractor vs the usual npm library, ms and peak RSS', report: 'section', needs: '../shared/corpus' },
  { name: 'chunking', file: 'chunking.bench.ts', title: 'Chunking throughput', what: 'our chunker vs LangChain text splitters', report: 'section', needs: '../shared/corpus' },
  { name: 'embedding', file: 'embedding.bench.ts', title: 'Embedding and reranking throughput', what: 'ONNX embedder and reranker vs transformers.js', report: 'section', needs: 'bench models (npm run bench:models)' },
  { name: 'index', file: 'index.bench.ts', title: 'Vector index (HNSW)', what: 'build, save, load, query vs a plain hnswlib-node use', report: 'section', },
  { name: 'e2e', file: 'e2e.bench.ts', title: 'End to end: retrieve_chunks vs a LangChain.js pipeline', what: 'retrieve_chunks cold and warm vs LangChain.js', report: 'section', needs: 'bench models, ../shared/corpus' },
  { name: 'engine', file: 'engine.bench.ts', title: 'retrieve_chunks before and after an engine change', what: 'retrieve_chunks cold and warm, a base revision vs this tree, lexical and hybrid + rerank', report: 'section', needs: '../shared/eval/scifact, git' },
  { name: 'retrieve-latency', file: 'retrieve-latency.bench.ts', title: 'Request latency before and after the engine changes', what: 'retrieve_chunks cold and warm and search_collection at ~100k chunks, a base revision (git worktree) vs this tree, side by side with ratios', report: 'section', needs: 'git' },
  { name: 'http-load', file: 'http-load.bench.ts', title: 'HTTP load (autocannon)', what: 'requests/s and latency of the REST API under load', report: 'section', needs: '../shared/corpus' },
  { name: 'doc-restart', file: 'doc-restart.bench.ts', title: 'Restart load of a big document index', what: 'first retrieve_chunks answer after a restart from a 20k-chunk index: lexical.bin loaded vs built from the chunks', report: 'output', },
  { name: 'startup', file: 'startup.bench.ts', title: 'Start-up time', what: 'process start to /health and to the MCP handshake', report: 'section', },
  { name: 'request-path', file: 'request-path.bench.ts', title: 'Request path vs bare Fastify', what: 'detect_language req/s over HTTP and spawn to /health, our server vs a bare Fastify server', report: 'output', },
  { name: 'streams', file: 'streams.bench.ts', title: 'Streams and big uploads', what: 'big uploads and downloads: memory and event-loop delay', report: 'section', },
  // Robustness of extraction under big and hostile inputs.
  { name: 'linearity', file: 'linearity.bench.ts', title: 'Extractor linearity on hostile shapes', what: 'each text-like extractor at 1x-8x input size: linear or not', report: 'output', },
  { name: 'isolation', file: 'extraction-isolation.bench.ts', title: 'Extraction in child processes', what: '/health latency while big documents extract, inline vs pool', report: 'output', },
  { name: 'event-loop', file: 'event-loop.bench.ts', title: 'Event-loop lag while chunking big documents', what: 'one-go vs time-sliced chunking and indexing, in process and over HTTP', report: 'output', },
  { name: 'scan-memory', file: 'scan-memory.bench.ts', title: 'Memory of OCR on 600-dpi scans', what: 'peak RSS and s/page of OCR on 4 and 35-page scans', report: 'output', },
  { name: 'ocr', file: 'ocr.bench.ts', title: 'OCR vs the tesseract CLI', what: 's/image, word recall and order vs tesseract', report: 'output', needs: 'tesseract-ocr (Debian) as the peer' },
  { name: 'pdf-pages', file: 'pdf-pages.bench.ts', title: 'PDF page bound on a 100,000-page PDF', what: 'PDF_MAX_PAGES and the abort of the page loop', report: 'section', },
  { name: 'pdf-tables', file: 'pdf-tables.bench.ts', title: 'Cost of PDF table detection', what: 'text layer, ruling-line walk and layout per page', report: 'section', needs: '../shared/corpus' },
  { name: 'pdf-text', file: 'pdf-text.bench.ts', title: 'Born-digital PDF text vs pdf-parse', what: 'our PDF text and tables vs pdf-parse getText on the 18 and 400-page corpus files', report: 'output', needs: '../shared/corpus' },
  { name: 'sheet-budget', file: 'sheet-budget.bench.ts', title: 'Workbook cell pre-count', what: 'the cell budget pre-count beside the whole XLSX extraction', report: 'section', },
  // Knowledge base.
  { name: 'languages', file: 'languages.bench.ts', title: 'Lexical retrieval per language', what: 'nDCG@10 and Recall@10 per language of each analyzer vs FTS5 and wink-bm25', report: 'section', needs: '../shared/eval/xquad-dev' },
  { name: 'kb', file: 'kb.bench.ts', title: 'Knowledge base end to end', what: 'ingestion, 10k and 100k-chunk search, restart, FTS5 side by side', report: 'output', needs: '../shared/eval/scifact, ../shared/corpus' },
  { name: 'kb-lexical', file: 'kb-lexical.bench.ts', title: 'Collection lexical index', what: 'add throughput, heap per 100k chunks, query latency, snapshot', report: 'output', needs: '../shared/eval/scifact (generated text without it)' },
  { name: 'kb-restart', file: 'kb-restart.bench.ts', title: 'Restart with a 1M-chunk collection', what: 'spawn to /health and to the first search with a fresh and a stale snapshot, RSS', report: 'section', needs: 'dist/ (npm run build)' },
  { name: 'kb-scale', file: 'kb-scale.bench.ts', title: 'Lexical search at 100k and 1M chunks', what: 'top-10 p50/p95 pruned vs exhaustive vs SQLite FTS5, identical results, growth 100k -> 1M', report: 'section', needs: '../shared/eval/scifact (generated sentences without it)' },
  { name: 'kb-serve', file: 'kb-serve.bench.ts', title: 'Collection search through the server at 100k and 1M chunks', what: 'one client: in-server p50/p95 of search_collection, its lexical stage and the HTTP round trip, growth 100k -> 1M', report: 'section', needs: 'dist/ (npm run build)' },
  { name: 'kb-search', file: 'kb-search.bench.ts', title: 'Collection search in process', what: 'search latency at ~10k chunks and what each confidence level means', report: 'output', needs: '../shared/eval/scifact' },
  { name: 'kb-store', file: 'kb-store.bench.ts', title: 'Knowledge base store (SQLite)', what: 'insert, iterate, filter and reopen on 100k chunks', report: 'output', },
  { name: 'kb-catch-up', file: 'kb-catch-up.bench.ts', title: 'Index catch-up on a shared data folder', what: 'catching open indexes up by N chunks vs rebuilding', report: 'output', },
  { name: 'kb-jobs', file: 'kb-jobs.bench.ts', title: 'Ingestion job throughput', what: 'documents/s by path and by URL through the job runner', report: 'output', },
  { name: 'index-budget', file: 'index-budget.bench.ts', title: 'Index cache budget', what: 'memory with 200 collections, small vs unbounded KB_INDEX_CACHE_MB', report: 'output', },
  { name: 'site-crawl', file: 'site-crawl.bench.ts', title: 'Site crawl and no-change recrawl', what: 'a 1,000-page loopback site crawled twice: time and requests, the recrawl all 304s', report: 'output', },
  { name: 'folder-sync', file: 'folder-sync.bench.ts', title: 'Folder source sync and no-change resync', what: 'a 10,000-file folder source synced twice: time and files read/hashed, the resync stat only', report: 'output', },
  { name: 'folder-walk', file: 'folder-walk.bench.ts', title: 'Folder walk event-loop delay', what: 'event-loop delay walking 50,000 files with ordinary and hostile globs', report: 'section', },
  { name: 'scale', file: 'scale.bench.ts', title: 'Scaling on Redis', what: 'ingestion with 1, 2, 4 workers and search with 1, 2 API processes', report: 'output', needs: 'redis-server (Debian)' },
];

/** npm scripts named bench:* that prepare rather than measure. */
export const SETUP_SCRIPTS: Record<string, string> = {
  'bench:models': 'generates the random-weight ONNX models the embedding and e2e benchmarks run',
};

export function benchmarkNamed(name: string): Benchmark | undefined {
  return BENCHMARKS.find((b) => b.name === name);
}

/** Problems with the registry: bench files it lacks or names that are gone, bench:* scripts it does not know. */
export function registryProblems(): string[] {
  const problems: string[] = [];
  const files = fs.readdirSync(BENCH_FOLDER).filter((f) => f.endsWith('.bench.ts'));
  for (const f of files) if (!BENCHMARKS.some((b) => b.file === f)) problems.push(`scripts/bench/${f} is not in the registry`);
  for (const b of BENCHMARKS) if (!files.includes(b.file)) problems.push(`the registry names ${b.file}, which does not exist`);
  const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  for (const [name, command] of Object.entries(scripts)) {
    if (!name.startsWith('bench:') || SETUP_SCRIPTS[name]) continue;
    const b = benchmarkNamed(name.slice('bench:'.length));
    if (!b) problems.push(`npm script ${name} is not in the registry`);
    else if (command !== `tsx scripts/bench/run-all.ts ${b.name}`) problems.push(`npm script ${name} should run "tsx scripts/bench/run-all.ts ${b.name}"`);
  }
  for (const b of BENCHMARKS) if (!scripts[`bench:${b.name}`]) problems.push(`no npm script bench:${b.name}`);
  return problems;
}
