/**
 * SciFact ingested as a knowledge-base collection through the REST API scores the nDCG@10 of
 * `npm run eval` (runEval, lexical) on the same split (test when the folder has it, else train):
 * issue 10's "How it will be checked". Each abstract is one Markdown file in an allowed folder
 * ('# title' then the abstract), ingested by path in one job; each query is a lexical search of the
 * collection, and a corpus document ranks where its best chunk ranks.
 *
 * Default settings, as a user would ingest them: a collection indexes a document of up to 2,000
 * characters as one chunk and does not halve the chunk size of short documents (chunking's
 * `documentLevel`), so most abstracts are one chunk, as runEval indexes them (docToChunk); before
 * that, the adaptive ~600-character Markdown chunks scored 0.6792 against runEval's 0.6988 on
 * train (2026-12-01). The collection then scores runEval's number, less what REST's top_k cap of
 * 20 chunks costs (~0.0014). The test also checks that the collection ranks exactly as runEval's core
 * (searchChunks) over the collection's own chunks, read back through the API.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, tempDir } from '../../helper.ts';
import { readCorpus, readQrels, readQueries } from '../../../src/retrieval/eval/beir.ts';
import { ndcgAt } from '../../../src/retrieval/eval/metrics.ts';
import { runEval } from '../../../src/retrieval/eval/run-eval.ts';
import { buildLexicalIndex, CANDIDATE_FACTOR, MIN_CANDIDATES, searchChunks } from '../../../src/retrieval/search.ts';
import { Analyzer } from '../../../src/retrieval/tokenizer.ts';
import type { Chunk } from '../../../src/retrieval/types.ts';
import type { ChunkRecord } from '../../../src/kb/types.ts';
import { evalDirPath } from '../data-dirs.ts';
import { corpusIdOf, rankDocuments, writeAbstracts } from './scifact-documents.ts';

/** How close the collection's nDCG@10 must be to runEval's. */
const TOLERANCE = 0.005;

t.setTimeout(30 * 60_000);

t.test('SciFact as a collection through the API scores the nDCG@10 of npm run eval', async (t) => {
  const dir = path.join(evalDirPath(), 'scifact');
  const split = fs.existsSync(path.join(dir, 'qrels.test.tsv')) ? 'test' : 'train';
  const files = { corpus: path.join(dir, 'corpus.jsonl'), queries: path.join(dir, `queries.${split}.jsonl`), qrels: path.join(dir, `qrels.${split}.tsv`) };
  const [docs, queries, qrels] = await Promise.all([readCorpus(files.corpus), readQueries(files.queries), readQrels(files.qrels)]);
  const judged = queries.filter((q) => qrels.has(q.id));

  const allowed = tempDir(t, 'kb-scifact-');
  writeAbstracts(path.join(allowed, 'scifact'), docs);
  const app = await buildTestApp(t, {
    env: { ALLOWED_DIRS: allowed, MODEL_DOWNLOADS: 'never', MODELS_DIR: tempDir(t, 'kb-no-models-') },
  });

  t.equal((await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'scifact' } })).statusCode, 201);
  const t0 = performance.now();
  const added = await app.inject({ method: 'POST', url: '/v1/collections/scifact/documents', payload: { paths: [allowed] } });
  t.equal(added.statusCode, 202);
  let job = added.json();
  while (!['succeeded', 'partial', 'failed', 'cancelled'].includes(job.status)) {
    await new Promise((r) => setTimeout(r, 250));
    job = (await app.inject(`/v1/jobs/${job.id}`)).json();
  }
  const ingestS = (performance.now() - t0) / 1000;
  t.equal(job.status, 'succeeded');
  t.same(job.counts, { total: docs.length, done: docs.length, skipped: 0, failed: 0, cancelled: 0 });
  const stats = (await app.inject('/v1/collections/scifact')).json().stats;
  t.equal(stats.documents, docs.length);
  t.comment(`ingested ${docs.length} abstracts (${stats.chunks} chunks) in ${ingestS.toFixed(1)} s: ${(docs.length / ingestS).toFixed(1)} documents/s`);

  let sum = 0;
  let none = 0;
  for (const q of judged) {
    // min_confidence 'none': the ranking is what is compared, and runEval scores every query's
    // ranking, including those a default search withholds as confidence 'none' (counted below).
    const res = await app.inject({ method: 'POST', url: '/v1/collections/scifact/search', payload: { query: q.text, mode: 'lexical', top_k: 20, min_confidence: 'none' } });
    if (res.statusCode !== 200) {
      t.fail(`search ${q.id}: ${res.statusCode} ${res.body}`);
      continue;
    }
    const body = res.json();
    if (body.confidence === 'none') none++;
    sum += ndcgAt(rankDocuments(body.results), qrels.get(q.id)!, 10);
  }
  const collection = Math.round((sum / judged.length) * 10_000) / 10_000;

  // runEval's ranking core (searchChunks over an in-memory BM25F index, as scripts/eval.ts runs it)
  // over the collection's own chunks, read back through the API: the collection's indexes must rank
  // exactly like it, whatever the chunking.
  const chunks: Chunk[] = [];
  const owner: string[] = [];
  for (let offset: number | null = 0; offset !== null; ) {
    const page: { items: Array<{ id: string; source: string; chunk_count: number }>; next_offset: number | null } = (
      await app.inject(`/v1/collections/scifact/documents?limit=500&offset=${offset}`)
    ).json();
    for (const d of page.items) {
      const got = (await app.inject(`/v1/collections/scifact/documents/${d.id}/chunks?limit=200`)).json().items as ChunkRecord[];
      for (const c of got) {
        chunks.push({ ...c, chunk_index: c.ord, total_chunks: d.chunk_count, importance_score: c.importance, doc_type: 'text' } as unknown as Chunk);
        owner.push(corpusIdOf(d.source));
      }
    }
    offset = page.next_offset;
  }
  t.equal(chunks.length, stats.chunks, 'every chunk read back');
  const lexical = buildLexicalIndex(chunks, new Analyzer());
  let coreSum = 0;
  for (const q of judged) {
    const res = await searchChunks({ query: q.text, chunks, lexical, mode: 'lexical', topK: 20, candidates: Math.max(MIN_CANDIDATES, CANDIDATE_FACTOR * 20), dense: null, rerank: null, signal: AbortSignal.timeout(60_000) });
    coreSum += ndcgAt(rankDocuments(res.hits.map((h) => ({ source: `${owner[h.index]}.md` }))), qrels.get(q.id)!, 10);
  }
  const core = Math.round((coreSum / judged.length) * 10_000) / 10_000;

  const ev = await runEval({ ...files, mode: 'lexical' });
  t.comment(
    `nDCG@10 SciFact ${split} (${judged.length} queries): collection via REST ${collection} (${none} answers with confidence none); ` +
      `eval core over the collection's ${chunks.length} chunks ${core}; runEval lexical (one chunk an abstract) ${ev.ndcg_at_10}`,
  );
  t.ok(Math.abs(collection - core) <= TOLERANCE, `collection ${collection} within ${TOLERANCE} of the eval core over the same chunks (${core})`);
  t.ok(Math.abs(collection - ev.ndcg_at_10) <= TOLERANCE, `collection ${collection} within ${TOLERANCE} of runEval ${ev.ndcg_at_10}`);
});
