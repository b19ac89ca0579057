/**
 * searchCollection runs retrieve_chunks' ranking core: the same hits and scores as searchChunks
 * over a Bm25Index of the whole collection; mode defaulting and the `retrieval` block (lexical
 * without an embedder says why, dense/hybrid refused with MODEL_UNAVAILABLE); hybrid with the
 * collection's embedder (the tiny test models, a real HNSW index), the queued reranker and the
 * explain trace with its rank changes.
 */
import t from 'tap';
import os from 'node:os';
import { pino } from 'pino';
import { searchCollection } from '../../src/kb/collection-search.ts';
import { CollectionDenseIndex } from '../../src/kb/dense-index.ts';
import { loadConfig } from '../../src/config.ts';
import { isToolError } from '../../src/errors.ts';
import { ModelManager } from '../../src/retrieval/models/model-manager.ts';
import { buildLexicalIndex, passageOf, searchChunks } from '../../src/retrieval/search.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { MODELS_FIXTURE_DIR } from '../retrieval/model-fixtures.ts';
import { fillCollection, filler, openFixture, signal } from './search-fixtures.ts';

const QUERY = 'supply forecast audit energy';

t.test('lexical: the same hits and scores as retrieve_chunks over the whole collection', async (t) => {
  const fx = openFixture(t, 'same');
  fillCollection(fx, 5, 60, 7);
  const all = [...fx.store.iterateChunks(fx.collection.id)];
  const bm = buildLexicalIndex(all, new Analyzer());
  for (const query of [QUERY, 'customer margin', 'vendor platform security review']) {
    for (const topK of [1, 5, 20]) {
      const ref = await searchChunks({ query, chunks: all, lexical: bm, mode: 'lexical', topK, rerankAbsent: { status: 'unavailable', reason: 'x' } });
      const got = await searchCollection(fx.deps(), { query, top_k: topK }, signal());
      t.same(
        got.results.map((h) => [h.chunk_id, h.score]),
        ref.hits.map((h) => [all[h.index]!.id, h.score]),
        `${query} / ${topK}`,
      );
    }
  }
});

t.test('without an embedder: lexical, and the retrieval block says why; dense and hybrid are refused', async (t) => {
  const fx = openFixture(t, 'plain');
  fillCollection(fx, 2, 30);
  const res = await searchCollection(fx.deps(), { query: QUERY, top_k: 3, explain: true }, signal());
  t.match(res.retrieval, {
    mode: 'lexical',
    embedder: null,
    reranker: 'unavailable',
    reranker_model: null,
    reason: 'lexical: the collection has no embeddings (its documents were indexed without an embedding model)',
    reranker_reason: 'no reranker model is configured',
    top_k: 3,
    candidates: 20,
  });
  t.equal(res.results.length, 3);
  t.ok(res.timings_ms.lexical_ms! >= 0 && res.timings_ms.fetch_ms! >= 0 && res.timings_ms.total_ms! >= 0);
  const trace = res.trace as { stages: string[]; candidates: Array<Record<string, unknown>>; summary: object };
  t.same(trace.stages, ['lexical', 'diversity', 'top_k']);
  t.equal(trace.candidates.length, 20);
  t.match(trace.candidates[0], { chunk_id: res.results[0]!.chunk_id, document_id: res.results[0]!.document_id, lexical_rank: 1, fused_rank: 1, final_rank: 1 });
  t.notOk('index' in trace.candidates[0]!, 'positions are mapped back to chunk ids');

  const asked = await searchCollection(fx.deps(), { query: QUERY, mode: 'lexical' }, signal());
  t.notOk('reason' in asked.retrieval, 'no reason when lexical was asked for');
  for (const mode of ['dense', 'hybrid'] as const) {
    const err = await searchCollection(fx.deps(), { query: QUERY, mode }, signal()).catch((e) => e);
    t.ok(isToolError(err) && err.code === 'MODEL_UNAVAILABLE', String(err));
    t.match(err.message, new RegExp(`mode "${mode}" needs an embedding model: the collection has no embeddings`));
  }
  const skipped = await searchCollection(fx.deps(), { query: QUERY, rerank: false }, signal());
  t.match(skipped.retrieval, { reranker: 'skipped', reranker_reason: 'rerank: false was requested' });
});

t.test('with the collection embedder and the reranker: hybrid, reranked, trace with rank changes', async (t) => {
  const config = loadConfig({}, { DATA_DIR: os.tmpdir(), ONNX_THREADS: 1, MODELS_DIR: MODELS_FIXTURE_DIR });
  const models = new ModelManager({ config, log: pino({ level: 'silent' }) });
  t.teardown(() => models.close());
  models.start();
  await models.ready();
  const embedder = models.embedderFor(10)!;
  t.ok(embedder, 'the tiny embedder is ready');

  const fx = openFixture(t, 'hybrid');
  fx.store.setCollectionEmbedder(fx.collection.id, embedder.id, embedder.dimension);
  const dense = await CollectionDenseIndex.create({ embedderId: embedder.id, dimension: embedder.dimension });
  for (let d = 0; d < 3; d++) {
    const chunks = Array.from({ length: 25 }, (_, i) => ({ text: filler(d * 100 + i, 25), heading_path: [`Doc ${d}`] }));
    const vectors = await embedder.embed(chunks.map(passageOf), 'passage');
    const { chunks: rows } = fx.add({ key: `https://docs.example/d${d}.pdf`, title: `Doc ${d}`, chunks }, vectors);
    await dense.add(rows.map((r) => r.id), vectors);
  }
  const deps = fx.deps({ indexes: { lexical: fx.lexical, dense }, models });
  t.equal(deps.collection.embedder, embedder.id);

  const res = await searchCollection(deps, { query: QUERY, top_k: 5, explain: true }, signal());
  t.match(res.retrieval, { mode: 'hybrid', embedder: embedder.id, reranker: 'used', reranker_model: models.rerankerId(), top_k: 5, candidates: 20 });
  t.notOk('reason' in res.retrieval);
  t.equal(res.results.length, 5);
  for (const k of ['lexical_ms', 'embed_ms', 'dense_ms', 'fusion_ms', 'rerank_ms', 'diversity_ms']) t.type(res.timings_ms[k], 'number', k);
  const trace = res.trace as { stages: string[]; rrf_k: number; candidates: Array<Record<string, any>>; summary: Record<string, number> };
  t.same(trace.stages, ['lexical', 'dense', 'fusion', 'rerank', 'diversity', 'top_k']);
  t.equal(trace.rrf_k, 60);
  t.ok(trace.candidates.every((c) => c.rerank_rank !== null && c.rerank_delta === c.fused_rank - c.rerank_rank), 'every candidate reranked, delta = fused - rerank');
  t.ok(trace.candidates.some((c) => c.dense_rank !== null) && trace.candidates.some((c) => c.lexical_rank !== null));
  const s = trace.summary;
  t.equal(s.moved_up + s.moved_down + s.unchanged + s.new, 5);
  // The hits are ordered by the reranker's logits: the score is the logit.
  const finals = trace.candidates.filter((c) => c.final_rank !== null).sort((a, b) => a.final_rank - b.final_rank);
  t.same(finals.map((c) => c.chunk_id), res.results.map((h) => h.chunk_id));
  t.same(res.results.map((h) => h.score), finals.map((c) => c.rerank_score));
  t.ok(['high', 'medium', 'low', 'none'].includes(res.confidence));

  const lexical = await searchCollection(deps, { query: QUERY, mode: 'lexical', rerank: false }, signal());
  t.match(lexical.retrieval, { mode: 'lexical', embedder: null, reranker: 'skipped' });
  const onlyDense = await searchCollection(deps, { query: QUERY, mode: 'dense', rerank: false, filters: { document_ids: [res.results[0]!.document_id] } }, signal());
  t.equal(onlyDense.retrieval.mode, 'dense');
  t.ok(onlyDense.results.length > 0 && onlyDense.results.every((h) => h.document_id === res.results[0]!.document_id), 'the filter applies to the dense stage');

  // The embedder gone from the model layer: lexical, saying why.
  const without = fx.deps({ indexes: { lexical: fx.lexical, dense }, models: { ...bind(models), embedderById: () => null } });
  const fallback = await searchCollection(without, { query: QUERY, rerank: false }, signal());
  t.equal(fallback.retrieval.mode, 'lexical');
  t.match(fallback.retrieval.reason, new RegExp(`^lexical: the embedder that indexed the collection \\(${embedder.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\) is not available`));
});

/** The model layer's methods bound to it (so one can be replaced in a copy). */
function bind(m: ModelManager) {
  return {
    embedderFor: m.embedderFor.bind(m),
    embedderById: m.embedderById.bind(m),
    denseUnavailableReason: m.denseUnavailableReason.bind(m),
    rerank: m.rerank.bind(m),
    rerankerId: m.rerankerId.bind(m),
    rerankerUnavailableReason: m.rerankerUnavailableReason.bind(m),
  };
}
