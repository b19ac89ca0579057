/**
 * End to end: retrieve_chunks over HTTP on a generated 100-page PDF and a 5,000-row spreadsheet
 * served from a local HTTP server on 127.0.0.1 — cold (download to answer, fresh server), warm
 * (index in memory), after restart (same DATA_DIR, index on disk) — in lexical mode (no models)
 * and hybrid + rerank mode (architecture-equivalent models in MODELS_DIR), against the LangChain.js
 * pipeline doing the same job with the same embedding model files (scripts/bench/langchain-e2e.ts).
 *
 *   npm run bench:e2e
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { chunkingProfile } from '../../src/retrieval/chunking.ts';
import { ensureBenchModels } from './embedding.bench.ts';
import { abstracts, ensureInputs } from './inputs.ts';
import { BENCH_MODELS_DIR, QUICK, SectionBuilder, isMain, log, round, runChild, runStandalone, summarize } from './harness.ts';
import type { Section } from './report.ts';
import { postJson, startApp, startFileServer, tempDataDir, type AppServer } from './servers.ts';

interface RetrieveBody {
  results?: Array<{ text: string }>;
  retrieval?: { mode: string; embedder: string | null; reranker: string; documents: Array<{ chunks: number; index: string }>; timings: Record<string, number> };
  error?: string;
  code?: string;
}

interface DocCase {
  label: string;
  file: string;
  kind: 'pdf' | 'xlsx';
  queries: string[];
  /** Text only a late page / row holds: is it in the index at all, and does a lexical query find it? */
  probe: { query: string; expect: string };
}

function docCases(inputs: { pdf100: string; xlsx5000: string }): DocCase[] {
  const all = abstracts();
  // Page p of the generated PDF holds abstracts 3p, 3p+1, ...: ask for the titles of the second ones.
  const pdfQueries = Array.from({ length: 10 }, (_, i) => all[(5 + i * 10) * 3 + 1].title);
  const late = all[91 * 3 + 1];
  return [
    {
      label: '100-page PDF',
      file: inputs.pdf100,
      kind: 'pdf',
      queries: pdfQueries,
      probe: { query: late.title, expect: late.text.slice(0, 40) },
    },
    {
      label: '5,000-row spreadsheet',
      file: inputs.xlsx5000,
      kind: 'xlsx',
      queries: ['Widget sales in the North region', 'ORD-100010', 'Gadget total above 10000', 'Central region Sprocket orders', 'Doohickey quantity', 'order date 2024', 'Gizmo unit price', 'West region', 'Thingamajig', 'Contraption East'],
      probe: { query: 'ORD-104321', expect: 'ORD-104321' },
    },
  ];
}

async function retrieve(app: AppServer, url: string, query: string): Promise<{ ms: number; body: RetrieveBody; status: number }> {
  const t0 = performance.now();
  const { status, body } = await postJson<RetrieveBody>(`${app.base}/v1/documents/retrieve`, { document_url: url, query, top_k: 5 });
  const ms = performance.now() - t0;
  if (status !== 200) throw new Error(`retrieve_chunks answered ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  return { ms, body, status };
}

async function indexedText(app: AppServer, url: string): Promise<string> {
  const { status, body } = await postJson<{ chunks: Array<{ text: string }> }>(`${app.base}/v1/documents/chunk`, { document_url: url, max_chunks: 10000 });
  if (status !== 200) return '';
  return body.chunks.map((c) => c.text).join('\n');
}

interface ModeResult {
  cold: number[];
  warm: number[];
  restart: number[];
  chunks: number;
  embedder: string | null;
  reranker: string;
  coldTimings: Record<string, number>;
  warmTimings: Record<string, number>;
  restartTimings: Record<string, number>;
  indexed: boolean;
  foundLexical: boolean | null;
}

async function runOurs(doc: DocCase, url: string, modelsDir: string | null, counts: { cold: number; warm: number; restart: number }): Promise<ModeResult> {
  const cold: number[] = [];
  let last: AppServer | null = null;
  let first: RetrieveBody | null = null;
  for (let i = 0; i < counts.cold; i++) {
    await last?.close();
    last = await startApp({ modelsDir, dataDir: tempDataDir() });
    const r = await retrieve(last, url, doc.queries[0]);
    cold.push(r.ms);
    first = r.body;
  }
  const app = last!;
  const warm: number[] = [];
  let warmBody: RetrieveBody | null = null;
  for (let i = 0; i < counts.warm; i++) {
    const r = await retrieve(app, url, doc.queries[(i % (doc.queries.length - 1)) + 1]);
    warm.push(r.ms);
    warmBody = r.body;
  }
  const text = await indexedText(app, url);
  const indexed = text.includes(doc.probe.expect);
  let foundLexical: boolean | null = null;
  if (modelsDir === null) {
    const r = await retrieve(app, url, doc.probe.query);
    foundLexical = (r.body.results ?? []).some((x) => x.text.includes(doc.probe.expect));
  }
  const dataDir = app.dataDir;
  await app.close();
  const restart: number[] = [];
  let restartTimings: Record<string, number> = {};
  for (let i = 0; i < counts.restart; i++) {
    const again = await startApp({ modelsDir, dataDir });
    const r = await retrieve(again, url, doc.queries[0]);
    restart.push(r.ms);
    restartTimings = r.body.retrieval?.timings ?? {};
    if (r.body.retrieval?.documents[0]?.index !== 'disk') log(`warning: after restart the index came from ${r.body.retrieval?.documents[0]?.index}`);
    await again.close();
  }
  return {
    cold,
    warm,
    restart,
    chunks: first?.retrieval?.documents[0]?.chunks ?? 0,
    embedder: first?.retrieval?.embedder ?? null,
    reranker: first?.retrieval?.reranker ?? 'unavailable',
    coldTimings: first?.retrieval?.timings ?? {},
    warmTimings: warmBody?.retrieval?.timings ?? {},
    restartTimings,
    indexed,
    foundLexical,
  };
}

interface LcResult {
  model_load_ms: number;
  cold_ms: number;
  stages: Record<string, number>;
  chunks: number;
  warm_ms: number[];
  save_ms: number;
  restart_ms: number;
  probe_found: boolean | null;
  peak_rss_mb: number;
}

const stat = (ms: number[]) => summarize(ms);

export async function runE2e(): Promise<Section> {
  ensureBenchModels();
  const inputs = await ensureInputs();
  const files = await startFileServer([inputs.pdf100, inputs.xlsx5000]);
  const b = new SectionBuilder('e2e', '5. End to end: retrieve_chunks vs a LangChain.js pipeline', {
    transport: 'HTTP on 127.0.0.1 (server listening, documents from a local static server)',
    top_k: 5,
    models: 'architecture-equivalent random-weight models (data/bench-models), int8',
    langchain: 'fetch + WebPDFLoader / SheetJS CSV, RecursiveCharacterTextSplitter, HuggingFaceTransformersEmbeddings (same model files, batch 16), HNSWLib, similaritySearch',
  });
  const table = b.table('Latency per call (ms): cold = download to answer on a fresh server; warm = index in memory; restart = first call after a restart (index on disk)', [
    'document',
    'pipeline',
    'chunks',
    'embedder',
    'reranker',
    'cold p50',
    'cold p95',
    'warm p50',
    'warm p95',
    'restart p50',
    'restart p95',
    'cold x vs LangChain',
    'warm x vs LangChain',
    'restart x vs LangChain',
  ]);
  const stages = b.table('Where the time goes (server-side stage timings of one call, ms; LangChain: its own stages)', ['document', 'pipeline', 'cold call', 'warm call', 'after restart']);
  const coverage = b.table('Coverage: is a late page / row (page 92, row 4,321) in the index at all, and does a lexical query for it find it?', [
    'document',
    'pipeline',
    'in the index',
    'found in top 5',
  ]);
  const raw: Record<string, unknown> = {};
  const lexCounts = QUICK ? { cold: 2, warm: 5, restart: 1 } : { cold: 3, warm: 20, restart: 3 };
  const hybCounts = QUICK ? { cold: 1, warm: 2, restart: 1 } : { cold: 1, warm: 6, restart: 1 };
  try {
    for (const doc of docCases(inputs)) {
      const url = files.url(doc.file);
      log(`e2e ${doc.label}: ours lexical`);
      const lex = await runOurs(doc, url, null, lexCounts);
      log(`e2e ${doc.label}: ours hybrid + rerank`);
      const hyb = await runOurs(doc, url, BENCH_MODELS_DIR, hybCounts);
      // LangChain with the embedder our hybrid run used (by chunk count: fast <= 50 chunks, else accurate).
      const repo = (hyb.embedder ?? 'onnx:Xenova/all-MiniLM-L6-v2:q8').split(':')[1];
      const pooling = repo.includes('bge') ? 'cls' : 'mean';
      const profile = doc.kind === 'pdf' ? chunkingProfile('pdf', 250_000) : chunkingProfile('xlsx', 10_000);
      log(`e2e ${doc.label}: LangChain (${repo})`);
      const lc = (await runChild(
        path.join(path.dirname(new URL(import.meta.url).pathname), 'langchain-e2e.ts'),
        [
          JSON.stringify({
            url,
            kind: doc.kind,
            modelsDir: BENCH_MODELS_DIR,
            model: repo,
            pooling,
            batchSize: 16,
            chunkSize: profile.size,
            chunkOverlap: profile.overlap,
            queries: doc.queries.slice(0, QUICK ? 3 : 10),
            probe: doc.probe,
            k: 5,
          }),
        ],
        { timeoutMs: 1_200_000 },
      )) as LcResult;
      const lcCold = lc.cold_ms;
      const lcWarm = stat(lc.warm_ms).median_ms;
      const lcRestart = lc.restart_ms;
      for (const [name, r] of [
        ['ours, lexical (no models)', lex],
        ['ours, hybrid + rerank', hyb],
      ] as const) {
        const c = stat(r.cold);
        const w = stat(r.warm);
        const rs = stat(r.restart);
        table.rows.push([
          doc.label,
          name,
          r.chunks,
          r.embedder ?? '—',
          r.reranker,
          c.median_ms,
          c.p95_ms,
          w.median_ms,
          w.p95_ms,
          rs.median_ms,
          rs.p95_ms,
          round(lcCold / c.median_ms, 2),
          round(lcWarm / w.median_ms, 2),
          round(lcRestart / rs.median_ms, 2),
        ]);
        const fmt = (t: Record<string, number>) => Object.entries(t).map(([k, v]) => `${k} ${round(v, 1)}`).join(', ');
        stages.rows.push([doc.label, name, fmt(r.coldTimings), fmt(r.warmTimings), fmt(r.restartTimings)]);
        coverage.rows.push([doc.label, name, r.indexed, r.foundLexical]);
      }
      const lw = stat(lc.warm_ms);
      table.rows.push([doc.label, 'LangChain.js pipeline', lc.chunks, `${repo} (same files)`, 'none (no local cross-encoder in LangChain.js)', round(lcCold, 1), round(lcCold, 1), lw.median_ms, lw.p95_ms, round(lcRestart, 1), round(lcRestart, 1), 1, 1, 1]);
      stages.rows.push([
        doc.label,
        'LangChain.js pipeline',
        Object.entries(lc.stages).map(([k, v]) => `${k} ${round(v, 1)}`).join(', '),
        `similaritySearch ${lcWarm}`,
        `HNSWLib.load + similaritySearch ${round(lcRestart, 1)} (no download)`,
      ]);
      coverage.rows.push([doc.label, 'LangChain.js pipeline', lc.chunks > 0 ? 'every row/page is chunked' : false, null]);
      raw[doc.label] = { lexical: lex, hybrid: hyb, langchain: lc };
      const compare = hyb.embedder ? stat(hyb.cold).median_ms : NaN;
      b.check(
        `${doc.label}: ours (hybrid + rerank) cold at least as fast as LangChain`,
        compare <= lcCold,
        `ours ${round(compare, 0)} ms (embedder ${hyb.embedder}, ${hyb.chunks} chunks, reranked) vs LangChain ${round(lcCold, 0)} ms (${lc.chunks} chunks, no rerank)`,
      );
    }
  } finally {
    await files.close();
  }
  b.note(
    'Models are random-weight copies with the real architectures: timings are real, rankings are not (the reranker scrambles the order), so "found in top 5" is only reported for lexical mode.',
  );
  b.note(
    'Ours reranks 20 candidates with the cross-encoder on every hybrid call (that is most of a warm hybrid call); LangChain.js has no local cross-encoder, so its warm call is one query embedding plus an HNSW search.',
  );
  b.section.data = raw;
  return b.finish();
}

if (isMain(import.meta.url)) await runStandalone(runE2e);
