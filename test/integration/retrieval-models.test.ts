/**
 * The model path end to end through retrieve_chunks: the tiny generated ONNX models
 * (scripts/make-test-models.py) copied into MODELS_DIR drive dense, hybrid + rerank and explain;
 * get_system_health reports them ready; a restart answers from the persisted HNSW index without
 * re-embedding; a damaged HNSW file is rebuilt. Without models, dense is a coded 503 that says how
 * to enable it and the default mode is lexical with the reason.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { tempDir } from '../helper.ts';
import { passageOf } from '../../src/retrieval/search.ts';
import type { Chunk } from '../../src/retrieval/types.ts';
import { buildAppOn, makeLongPdf, PLANTED, post, startStaticServer, tinyModelsDir } from './helpers.ts';

const FAST = 'onnx:Xenova/all-MiniLM-L6-v2:q8';
const ACCURATE = 'onnx:Xenova/bge-small-en-v1.5:fp32';
const RERANKER = 'onnx:Xenova/ms-marco-MiniLM-L-6-v2:q8';

async function appWithModels(t: Parameters<typeof buildAppOn>[0], dataDir: string, modelsDir: string): Promise<FastifyInstance> {
  const app = await buildAppOn(t, dataDir, { MODELS_DIR: modelsDir });
  await app.services.models.ready();
  return app;
}

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const indexDir = (dataDir: string) => {
  const [key] = fs.readdirSync(path.join(dataDir, 'indexes')).filter((d) => !d.startsWith('.'));
  return path.join(dataDir, 'indexes', key!);
};

t.test('tiny ONNX models in MODELS_DIR: dense, hybrid + rerank and explain through the tool; restart from disk', async (t) => {
  const srv = await startStaticServer(t);
  const url = srv.add('models.pdf', await makeLongPdf(), 'application/pdf');
  const dataDir = tempDir(t);
  const modelsDir = tinyModelsDir(t);
  const planted = PLANTED[1]!;
  const app = await appWithModels(t, dataDir, modelsDir);

  t.equal((await app.inject('/health')).json().checks.models, 'ready', '/health readiness: models ready');
  const health = (await app.inject('/v1/system/health')).json();
  t.same(
    health.models.map((m: Record<string, unknown>) => [m.id, m.role, m.kind, m.state, m.dimension, m.path]),
    [
      [FAST, 'fast', 'embedder', 'ready', 16, path.join(modelsDir, 'Xenova/all-MiniLM-L6-v2')],
      [ACCURATE, 'accurate', 'embedder', 'ready', 24, path.join(modelsDir, 'Xenova/bge-small-en-v1.5')],
      [RERANKER, 'reranker', 'reranker', 'ready', undefined, path.join(modelsDir, 'Xenova/ms-marco-MiniLM-L-6-v2')],
    ],
  );
  t.same(health.features.dense_retrieval, { available: true });
  t.same(health.features.reranking, { available: true, model: RERANKER });

  // Dense only, no reranking: the tool's ranking is the exact cosine ranking of the model's own vectors.
  const dense = await post(app, '/v1/documents/retrieve', { document_url: url, query: planted.query, mode: 'dense', rerank: false, top_k: 5 });
  t.equal(dense.status, 200);
  const chunkCount = dense.body.total_chunks_indexed;
  t.ok(chunkCount > 50, `${chunkCount} chunks: the accurate embedder serves documents over 50 chunks`);
  t.match(dense.body.retrieval, { mode: 'dense', embedder: ACCURATE, reranker: 'skipped', reranker_model: null, reranker_reason: 'rerank: false was requested' });
  t.same(dense.body.retrieval.documents, [{ source: url, document_type: 'pdf', chunks: chunkCount, index: 'built', embedder: ACCURATE }]);
  t.equal(app.services.retrieval.stats().embedded_chunks, chunkCount, 'every chunk embedded once');
  t.same(fs.readdirSync(indexDir(dataDir)).sort(), ['chunks.json', 'dense.hnsw', 'dense.hnsw.json', 'lexical.bin', 'manifest.json']);
  t.match(JSON.parse(fs.readFileSync(path.join(indexDir(dataDir), 'manifest.json'), 'utf8')), { embedder: ACCURATE, dimension: 24, chunks: chunkCount });

  const chunks = (await post(app, '/v1/documents/chunk', { document_url: url })).body.chunks as Chunk[];
  t.equal(chunks.length, chunkCount);
  const embedder = app.services.models.embedderById(ACCURATE)!;
  const passages = await embedder.embed(chunks.map(passageOf), 'passage');
  const [query] = await embedder.embed([planted.query], 'query');
  const exact = passages
    .map((v, i) => ({ i, score: cosine(v, query!) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, 5);
  t.same(
    dense.body.results.map((r: { chunk_index: number }) => r.chunk_index),
    exact.map((e) => e.i),
    'HNSW top 5 = brute-force cosine top 5',
  );
  dense.body.results.forEach((r: { score: number }, k: number) => t.ok(Math.abs(r.score - exact[k]!.score) < 1e-3, `cosine ${r.score}`));

  // Hybrid with the cross-encoder: scores are its logits, in order.
  const hybrid = await post(app, '/v1/documents/retrieve', { document_url: url, query: planted.query, mode: 'hybrid', rerank: true, top_k: 5 });
  t.equal(hybrid.status, 200);
  t.match(hybrid.body.retrieval, { mode: 'hybrid', embedder: ACCURATE, reranker: 'used', reranker_model: RERANKER });
  t.notOk('reranker_reason' in hybrid.body.retrieval);
  t.equal(hybrid.body.retrieval.documents[0].index, 'memory');
  const scores = hybrid.body.results.map((r: { score: number }) => r.score);
  t.same(scores, [...scores].sort((a: number, b: number) => b - a), 'ordered by rerank score');
  t.ok(typeof hybrid.body.retrieval.timings.rerank_ms === 'number' && typeof hybrid.body.retrieval.timings.dense_ms === 'number');

  // Default mode with models is hybrid; explain traces every candidate through every stage.
  const explained = await post(app, '/v1/documents/retrieve', { document_url: url, query: planted.query, explain: true, top_k: 5 });
  t.equal(explained.status, 200);
  t.match(explained.body.retrieval, { mode: 'hybrid', embedder: ACCURATE, reranker: 'used' });
  const trace = explained.body.trace;
  t.same(trace.stages, ['lexical', 'dense', 'fusion', 'rerank', 'diversity', 'top_k']);
  t.equal(trace.rrf_k, 60);
  t.equal(trace.candidates_per_stage, 20);
  for (const c of trace.candidates) {
    for (const key of ['dense_rank', 'lexical_rank', 'fused_rank', 'rerank_rank', 'rerank_delta', 'final_rank']) t.ok(key in c, `candidate has ${key}`);
    if (c.rerank_rank !== null) t.equal(c.rerank_delta, c.fused_rank - c.rerank_rank, 'rerank_delta = fused_rank - rerank_rank');
  }
  t.ok(trace.candidates.some((c: { dense_rank: number | null }) => c.dense_rank !== null), 'dense candidates');
  t.ok(trace.candidates.some((c: { lexical_rank: number | null }) => c.lexical_rank !== null), 'lexical candidates');
  t.same(
    trace.candidates.map((c: { fused_rank: number }) => c.fused_rank).sort((a: number, b: number) => a - b),
    trace.candidates.map((_: unknown, i: number) => i + 1),
    'fused ranks are 1..n',
  );
  const plantedChunk = chunks.find((c) => c.text.includes(planted.phrase))!;
  const lexTop = trace.candidates.find((c: { lexical_rank: number | null }) => c.lexical_rank === 1);
  t.equal(lexTop.chunk_index, plantedChunk.chunk_index, 'BM25 ranks the chunk with the phrase first');
  const finals = trace.candidates.filter((c: { final_rank: number | null }) => c.final_rank !== null).sort((a: { final_rank: number }, b: { final_rank: number }) => a.final_rank - b.final_rank);
  t.same(
    finals.map((c: { chunk_index: number }) => c.chunk_index),
    explained.body.results.map((r: { chunk_index: number }) => r.chunk_index),
    'final ranks are the answer',
  );
  const s = trace.summary;
  t.equal(s.moved_up + s.moved_down + s.unchanged + s.new, explained.body.results.length);
  t.equal(s.moved_up + s.moved_down + s.unchanged + s.dropped, 5, 'against the fused top 5');

  const queue = (await app.inject('/v1/system/health')).json().features.retrieval_stats.rerank_queue;
  t.equal(queue.used, 2, 'two calls reranked');
  await app.close();

  // Restart: the dense index is read from disk; nothing is extracted or embedded again.
  const app2 = await appWithModels(t, dataDir, modelsDir);
  const again = await post(app2, '/v1/documents/retrieve', { document_url: url, query: planted.query, mode: 'dense', rerank: false, top_k: 5 });
  t.equal(again.status, 200);
  t.match(again.body.retrieval, { mode: 'dense', embedder: ACCURATE });
  t.equal(again.body.retrieval.documents[0].index, 'disk');
  t.same(
    again.body.results.map((r: { chunk_index: number }) => r.chunk_index),
    dense.body.results.map((r: { chunk_index: number }) => r.chunk_index),
    'same dense answer after the restart',
  );
  t.same(app2.services.retrieval.stats(), { built: 0, from_disk: 1, from_memory: 0, embedded_chunks: 0, builds_in_flight: 0 });
  t.match(app2.services.documents.stats(), { extractions: 0 });

  // A damaged HNSW file: dropping the memory layer sends the next call to disk, where the file
  // fails verification; the index is rebuilt (re-embedded) transparently with the same answer.
  const hnsw = path.join(indexDir(dataDir), 'dense.hnsw');
  fs.truncateSync(hnsw, Math.floor(fs.statSync(hnsw).size / 3));
  app2.services.caches.retriever.clear();
  const rebuilt = await post(app2, '/v1/documents/retrieve', { document_url: url, query: planted.query, mode: 'dense', rerank: false, top_k: 5 });
  t.equal(rebuilt.status, 200);
  t.equal(rebuilt.body.retrieval.documents[0].index, 'built');
  t.same(
    rebuilt.body.results.map((r: { chunk_index: number }) => r.chunk_index),
    dense.body.results.map((r: { chunk_index: number }) => r.chunk_index),
  );
  t.match(app2.services.retrieval.stats(), { built: 1, from_disk: 1, embedded_chunks: chunkCount });
  t.match(app2.services.documents.stats(), { extractions: 1 }, 're-extracted: the chunks on disk were not trusted either');
  const meta = JSON.parse(fs.readFileSync(path.join(indexDir(dataDir), 'manifest.json'), 'utf8'));
  t.equal(meta.files['dense.hnsw'].bytes, fs.statSync(hnsw).size, 'a whole index file was written again');
});

t.test('without models: dense is 503 MODEL_UNAVAILABLE saying how to enable it; the default falls back to lexical with a reason', async (t) => {
  const srv = await startStaticServer(t);
  const url = srv.add('ten-pages.pdf', await makeLongPdf(10), 'application/pdf');
  const planted = PLANTED[0]!;
  const app = await buildAppOn(t, tempDir(t));
  await app.services.models.ready();

  for (const mode of ['dense', 'hybrid']) {
    const res = await post(app, '/v1/documents/retrieve', { document_url: url, query: planted.query, mode });
    t.equal(res.status, 503, mode);
    t.equal(res.body.code, 'MODEL_UNAVAILABLE');
    t.match(res.body.error, new RegExp(`^mode "${mode}" needs an embedding model: no embedding model is available \\(`));
    t.match(res.body.error, /To enable dense retrieval, put the model files in .*\/<org>\/<name>\//);
    t.match(res.body.error, /npm run models:fetch/);
    t.match(res.body.error, /EMBEDDINGS_URL/);
  }

  const res = await post(app, '/v1/documents/retrieve', { document_url: url, query: planted.query });
  t.equal(res.status, 200);
  t.match(res.body.retrieval, { mode: 'lexical', embedder: null, reranker: 'unavailable', reranker_model: null });
  // Every answer carries these: one sentence each, no paths; get_system_health has the details.
  t.equal(res.body.retrieval.reason, 'lexical: no embedding model is available, so BM25 served the query; get_system_health (features.dense_retrieval) says how to add one');
  t.match(res.body.retrieval.reranker_reason, /^reranker onnx:Xenova\/ms-marco-MiniLM-L-6-v2:q8 is unavailable, so results keep the fused order; get_system_health \(features\.reranking\)/);
  for (const field of ['reason', 'reranker_reason']) {
    const text = res.body.retrieval[field] as string;
    t.ok(text.length <= 200, `${field} is short (${text.length} characters)`);
    t.notMatch(text, /MODELS_DIR|\/<org>|config\.json|models:fetch/, `${field} repeats no paths or file lists`);
  }
  const health = (await app.inject('/v1/system/health')).json();
  t.match(health.features.dense_retrieval.reason, /To enable dense retrieval, put the model files in/, 'the details stay in get_system_health');
  t.match(health.features.reranking.reason, /model files missing/);
  t.ok(res.body.results[0].text.includes(planted.phrase));
  t.equal(app.services.retrieval.stats().embedded_chunks, 0);
  t.equal(srv.hits('ten-pages.pdf'), 1, 'the refused dense calls still downloaded once, then served from cache');
  // search_collection says the same in one sentence (its ingestion downloads the file again).
  t.equal((await post(app, '/v1/collections', { name: 'no-models' })).status, 201);
  const job = await post(app, '/v1/collections/no-models/documents', { urls: [url], wait_seconds: 120 });
  t.equal(job.body.status, 'succeeded', JSON.stringify(job.body.items?.[0]?.error ?? job.body.status));
  const found = await post(app, '/v1/collections/no-models/search', { query: planted.query });
  t.equal(found.status, 200);
  t.match(found.body.retrieval, { reranker: 'unavailable' });
  t.match(found.body.retrieval.reranker_reason, /^reranker onnx:Xenova\/ms-marco-MiniLM-L-6-v2:q8 is unavailable, so results keep the fused order; get_system_health \(features\.reranking\)/);
  t.ok(found.body.retrieval.reranker_reason.length <= 200, `search_collection's reranker_reason is short (${found.body.retrieval.reranker_reason.length} characters)`);
  t.notMatch(found.body.retrieval.reranker_reason, /MODELS_DIR|\/<org>|config\.json|models:fetch/, 'and repeats no paths');
});
