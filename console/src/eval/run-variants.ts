/**
 * Runs an evaluation through the public API only: optionally ingests a BEIR corpus into a
 * collection (one upload per document, named "<corpus id>.txt" so hits map back to corpus ids),
 * then asks POST /v1/collections/{name}/search every query once per variant and scores the
 * answers with the server's metric formulas. A variant the collection cannot serve (no embedder,
 * no reranker) is reported as unavailable with the API's own reason.
 */
import { ApiError, get, post, seg, type Job } from '../api.ts';
import { ENDED_JOB_STATUSES } from '../../../src/contract/job-progress.ts';
import { COLLECTION_MAX_TOP_K } from '../../../src/contract/search-limits.ts';
import { searchCollection, type Mode } from '../search/search-api.ts';
import { latencySummary, rankedTargets, scoreRuns, type LatencySummary, type VariantMetrics } from './metrics.ts';
import type { CorpusDoc, EvalSet } from './parse-set.ts';

export interface Variant {
  id: string;
  label: string;
  mode: Mode;
  rerank: boolean;
}

export const VARIANTS: readonly Variant[] = [
  { id: 'lexical', label: 'lexical', mode: 'lexical', rerank: false },
  { id: 'dense', label: 'dense', mode: 'dense', rerank: false },
  { id: 'hybrid', label: 'hybrid', mode: 'hybrid', rerank: false },
  { id: 'hybrid-rerank', label: 'hybrid + rerank', mode: 'hybrid', rerank: true },
];

/** The most hits the search API returns per query (its top_k maximum), so Recall@100 sees 100. */
export const API_TOP_K = COLLECTION_MAX_TOP_K;

export interface VariantResult {
  variant: Variant;
  status: 'ok' | 'unavailable' | 'failed' | 'cancelled';
  reason?: string;
  code?: string;
  request_id?: string | null;
  metrics?: VariantMetrics;
  /** Wall time per query as the page saw it. */
  latency?: LatencySummary;
  /** timings_ms.total_ms per query as the server measured it. */
  server_latency?: LatencySummary;
  queries_run: number;
}

export function corpusFileName(id: string): string {
  return `${encodeURIComponent(id)}.txt`;
}

function corpusFileText(d: CorpusDoc): string {
  return d.title ? `${d.title}\n\n${d.text}\n` : `${d.text}\n`;
}

export interface IngestReport {
  done: number;
  skipped: number;
  failed: number;
  errors: string[];
}

/**
 * Uploads every corpus document into `collection` (created when missing), a few at a time, each
 * waited for; onProgress(finished, total).
 */
export async function ingestCorpus(
  collection: string,
  corpus: readonly CorpusDoc[],
  onProgress: (finished: number, total: number) => void,
  signal: AbortSignal,
  concurrency = 3,
): Promise<IngestReport> {
  const report: IngestReport = { done: 0, skipped: 0, failed: 0, errors: [] };
  let next = 0;
  let finished = 0;
  onProgress(0, corpus.length);
  const worker = async () => {
    while (next < corpus.length) {
      signal.throwIfAborted();
      const d = corpus[next++];
      const form = new FormData();
      form.append('wait_seconds', '60');
      form.append('file', new Blob([corpusFileText(d)], { type: 'text/plain' }), corpusFileName(d.id));
      let job = await post<Job>(`/v1/collections/${seg(collection)}/documents`, form, { signal });
      while (!ENDED_JOB_STATUSES.has(job.status)) {
        await new Promise((r) => setTimeout(r, 300));
        signal.throwIfAborted();
        job = await get<Job>(`/v1/jobs/${seg(job.id)}`, { signal });
      }
      report.done += job.counts.done;
      report.skipped += job.counts.skipped;
      report.failed += job.counts.failed;
      for (const it of job.items) if (it.error && report.errors.length < 20) report.errors.push(`${d.id}: ${it.error.code} ${it.error.message}`);
      onProgress(++finished, corpus.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, corpus.length) }, worker));
  return report;
}

/** One variant over every query of the set, in order (one at a time, so latencies do not contend). */
export async function runVariant(
  collection: string,
  variant: Variant,
  set: EvalSet,
  k: number,
  onProgress: (done: number, total: number) => void,
  signal: AbortSignal,
): Promise<VariantResult> {
  const ranked = new Map<string, string[]>();
  const client: number[] = [];
  const server: number[] = [];
  let run = 0;
  onProgress(0, set.queries.length);
  for (const q of set.queries) {
    if (signal.aborted) return { variant, status: 'cancelled', queries_run: run };
    const t0 = performance.now();
    let answer;
    try {
      answer = await searchCollection(collection, { query: q.text, top_k: API_TOP_K, mode: variant.mode, rerank: variant.rerank }, signal);
    } catch (err) {
      if (signal.aborted) return { variant, status: 'cancelled', queries_run: run };
      if (err instanceof ApiError) {
        const unavailable = err.code === 'MODEL_UNAVAILABLE';
        return { variant, status: unavailable ? 'unavailable' : 'failed', reason: err.message, code: err.code, request_id: err.request_id, queries_run: run };
      }
      return { variant, status: 'failed', reason: (err as Error).message, queries_run: run };
    }
    client.push(performance.now() - t0);
    if (typeof answer.timings_ms.total_ms === 'number') server.push(answer.timings_ms.total_ms);
    if (variant.rerank && answer.retrieval.reranker !== 'used') {
      return {
        variant,
        status: 'unavailable',
        reason: `reranker ${answer.retrieval.reranker}${answer.retrieval.reranker_reason ? `: ${answer.retrieval.reranker_reason}` : ''}`,
        queries_run: run + 1,
      };
    }
    if (answer.retrieval.mode !== variant.mode) {
      return { variant, status: 'unavailable', reason: `the server answered in ${answer.retrieval.mode} mode${answer.retrieval.reason ? `: ${answer.retrieval.reason}` : ''}`, queries_run: run + 1 };
    }
    ranked.set(q.id, rankedTargets(answer.results, set.qrels.get(q.id) ?? new Map(), set.level));
    onProgress(++run, set.queries.length);
  }
  return {
    variant,
    status: 'ok',
    metrics: scoreRuns(ranked, new Map(set.queries.map((q) => [q.id, set.qrels.get(q.id) ?? new Map()])), k),
    latency: latencySummary(client),
    server_latency: latencySummary(server),
    queries_run: run,
  };
}
