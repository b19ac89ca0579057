/**
 * The evaluation through the knowledge base, as a user gets it: every corpus document is written as
 * one file (Markdown with its title as a heading, or plain text with the title as its first line),
 * the folder is ingested into a fresh collection with default settings, and each query is answered
 * by collection search. Metrics are computed on the documents of the hits in the order returned
 * (a document's later chunks do not count twice), so the numbers compare with `npm run eval`'s.
 *
 *   npm run eval -- --dataset ../shared/eval/scifact --split train --via collection [--as md|txt]
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createServices } from '../src/services.ts';
import { readCorpus, readQrels, readQueries } from '../src/retrieval/eval/beir.ts';
import { meanMetrics, queryMetrics } from '../src/retrieval/eval/metrics.ts';

export interface CollectionEvalOptions {
  corpus: string;
  queries: string;
  qrels: string;
  mode: 'lexical' | 'dense' | 'hybrid';
  rerank: boolean;
  /** How each document is written: 'md' (# title) or 'txt' (title on the first line). */
  as: 'md' | 'txt';
  limit?: number;
}

/** Search depth asked of the collection: its largest top_k. */
const DEPTH = 100;

export async function runCollectionEval(opts: CollectionEvalOptions): Promise<Record<string, unknown>> {
  const started = performance.now();
  const docs = await readCorpus(opts.corpus);
  const qrels = await readQrels(opts.qrels);
  const queries = (await readQueries(opts.queries)).filter((q) => qrels.has(q.id)).slice(0, opts.limit ?? Infinity);
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'eval-collection-'));
  const folder = path.join(work, 'docs');
  await fs.mkdir(folder);
  const byFile = new Map<string, string>();
  for (const d of docs) {
    const name = `${encodeURIComponent(d.id)}.${opts.as}`;
    byFile.set(name, d.id);
    const body = opts.as === 'md' ? `${d.title ? `# ${d.title}\n\n` : ''}${d.text}\n` : `${d.title ? `${d.title}\n\n` : ''}${d.text}\n`;
    await fs.writeFile(path.join(folder, name), body);
  }
  const config = loadConfig({
    ...process.env,
    DATA_DIR: path.join(work, 'data'),
    ALLOWED_DIRS: folder,
    // One call for the whole folder (a corpus can hold more files than the default queue bound).
    INGEST_QUEUE_MAX: String(Math.max(docs.length + 10, 1000)),
  });
  const services = createServices(config, { log: pino({ level: 'silent' }) });
  try {
    const kb = services.kb;
    const name = 'eval';
    kb.createCollection(name, 'evaluation corpus');
    const ingestStarted = performance.now();
    const job = await kb.addDocuments(name, { paths: [folder] });
    let done = await kb.waitForJob(job.id, 3_600_000);
    while (done.status === 'queued' || done.status === 'running') done = await kb.waitForJob(job.id, 3_600_000);
    const ingestMs = performance.now() - ingestStarted;
    const all = [];
    let distinct = 0;
    const confidence: Record<string, number> = {};
    const searchStarted = performance.now();
    for (const q of queries) {
      // min_confidence 'none': an evaluation ranks every query (by default a 'none' answer has no results).
      const res = await kb.search(name, { query: q.text, top_k: DEPTH, mode: opts.mode, rerank: opts.rerank, min_confidence: 'none' }, { signal: new AbortController().signal });
      confidence[res.confidence] = (confidence[res.confidence] ?? 0) + 1;
      const ranked: string[] = [];
      const seen = new Set<string>();
      for (const h of res.results) {
        const id = byFile.get(path.basename(h.source));
        if (id !== undefined && !seen.has(id)) {
          seen.add(id);
          ranked.push(id);
        }
      }
      distinct += ranked.length;
      all.push(queryMetrics(ranked, qrels.get(q.id)!));
    }
    return {
      ...meanMetrics(all),
      queries: queries.length,
      via: 'collection',
      as: opts.as,
      mode: opts.mode,
      documents: docs.length,
      job: { status: done.status, ...done.counts },
      confidence,
      distinct_documents_per_query: Math.round((distinct / Math.max(1, queries.length)) * 10) / 10,
      ingest_ms: Math.round(ingestMs),
      query_ms_mean: Math.round(((performance.now() - searchStarted) / Math.max(1, queries.length)) * 1000) / 1000,
      seconds: Math.round((performance.now() - started) / 10) / 100,
    };
  } finally {
    await services.close();
    await fs.rm(work, { recursive: true, force: true });
  }
}
