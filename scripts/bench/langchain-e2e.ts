/**
 * The LangChain.js pipeline a Node user would write for the same job, run in its own process
 * (its pdf.js copy and its model session stay out of the server's process):
 *
 *   fetch(url) -> WebPDFLoader (PDF) or SheetJS -> CSV text (XLSX) -> RecursiveCharacterTextSplitter
 *   -> HuggingFaceTransformersEmbeddings (the same ONNX model files as the server) -> HNSWLib
 *   -> similaritySearch
 *
 * Cold = download to answer with the embedding pipeline already loaded (as the server's models
 * are loaded before its cold run); warm = further queries on the in-memory store; restart =
 * HNSWLib.load from the directory save() wrote, then a query.
 *
 *   npx tsx scripts/bench/langchain-e2e.ts '<json args>'   (prints one JSON line)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import { env } from '@huggingface/transformers';
import { Document } from '@langchain/core/documents';
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import { HNSWLib } from '@langchain/community/vectorstores/hnswlib';
import { WebPDFLoader } from '@langchain/community/document_loaders/web/pdf';
import { HuggingFaceTransformersEmbeddings } from '@langchain/community/embeddings/huggingface_transformers';

interface Args {
  url: string;
  kind: 'pdf' | 'xlsx';
  modelsDir: string;
  model: string;
  pooling: 'mean' | 'cls';
  batchSize: number;
  chunkSize: number;
  chunkOverlap: number;
  queries: string[];
  /** A string that only a late row / page holds: does the pipeline find it? */
  probe?: { query: string; expect: string };
  k: number;
}

const args = JSON.parse(process.argv[2]) as Args;
const require = createRequire(import.meta.url);

env.allowRemoteModels = false;
env.localModelPath = args.modelsDir;

const embeddings = new HuggingFaceTransformersEmbeddings({
  model: args.model,
  batchSize: args.batchSize,
  pretrainedOptions: { dtype: 'q8', local_files_only: true },
  pipelineOptions: { pooling: args.pooling, normalize: true },
});

async function load(url: string): Promise<Document[]> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`download failed: ${res.status}`);
  if (args.kind === 'pdf') return new WebPDFLoader(await res.blob(), { splitPages: true }).load();
  const XLSX = require('xlsx') as typeof import('xlsx');
  const wb = XLSX.read(Buffer.from(await res.arrayBuffer()), { type: 'buffer', cellDates: true });
  return wb.SheetNames.map((name) => new Document({ pageContent: XLSX.utils.sheet_to_csv(wb.Sheets[name]), metadata: { sheet: name } }));
}

async function main(): Promise<void> {
  // Load the model before timing, as the server loads its models at start-up.
  const tModel = performance.now();
  await embeddings.embedQuery('warm up');
  const modelLoadMs = performance.now() - tModel;

  const splitter = new RecursiveCharacterTextSplitter({ chunkSize: args.chunkSize, chunkOverlap: args.chunkOverlap });
  const stages: Record<string, number> = {};
  const t0 = performance.now();
  const docs = await load(args.url);
  stages.load_ms = performance.now() - t0;
  let t = performance.now();
  const chunks = await splitter.splitDocuments(docs);
  stages.split_ms = performance.now() - t;
  t = performance.now();
  const vectors = await embeddings.embedDocuments(chunks.map((c) => c.pageContent));
  stages.embed_ms = performance.now() - t;
  t = performance.now();
  const store = new HNSWLib(embeddings, { space: 'cosine', numDimensions: vectors[0].length });
  await store.addVectors(vectors, chunks);
  stages.index_ms = performance.now() - t;
  t = performance.now();
  await store.similaritySearch(args.queries[0], args.k);
  stages.search_ms = performance.now() - t;
  const coldMs = performance.now() - t0;

  const warm: number[] = [];
  for (const q of args.queries.slice(1)) {
    const s = performance.now();
    await store.similaritySearch(q, args.k);
    warm.push(performance.now() - s);
  }
  let probeFound: boolean | null = null;
  if (args.probe) {
    const hits = await store.similaritySearch(args.probe.query, args.k);
    probeFound = hits.some((h) => h.pageContent.includes(args.probe!.expect));
  }

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-bench-lc-'));
  try {
    let s = performance.now();
    await store.save(dir);
    const saveMs = performance.now() - s;
    s = performance.now();
    const loaded = await HNSWLib.load(dir, embeddings);
    await loaded.similaritySearch(args.queries[0], args.k);
    const restartMs = performance.now() - s;
    process.stdout.write(
      JSON.stringify({
        model_load_ms: modelLoadMs,
        cold_ms: coldMs,
        stages,
        chunks: chunks.length,
        chars: chunks.reduce((n, c) => n + c.pageContent.length, 0),
        warm_ms: warm,
        save_ms: saveMs,
        restart_ms: restartMs,
        probe_found: probeFound,
        peak_rss_mb: (process.resourceUsage().maxRSS * 1024) / 1048576,
      }) + '\n',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
