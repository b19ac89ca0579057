import t from 'tap';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { buildLexicalIndex, lexicalDocOf, passageOf, searchChunks, type DenseSearch, type RerankFn } from '../../src/retrieval/search.ts';
import type { ScoredIndex } from '../../src/retrieval/bm25.ts';

const chunks = [
  { text: 'Aspirin lowers the risk of heart attack in adults over fifty.', heading_path: ['Cardiology'] },
  { text: 'Statins reduce cholesterol and cardiovascular events.', heading_path: ['Cardiology'] },
  { text: 'Vitamin D supplementation and bone density in older women.', heading_path: ['Endocrinology'] },
  { text: 'Aspirin lowers the risk of heart attack in adults over fifty years.', heading_path: ['Cardiology', 'Copy'] },
  { text: 'Regular exercise improves sleep quality and mood.', heading_path: [] },
  { text: 'Heart failure outcomes after aspirin therapy in a large cohort.', heading_path: ['Outcomes'] },
];
const analyzer = new Analyzer();
const lexical = buildLexicalIndex(chunks, analyzer);

/** A character-trigram overlap ranker: a real, deterministic similarity (no model involved). */
function trigramDense(texts: string[]): DenseSearch {
  const grams = (s: string) => {
    const g = new Set<string>();
    const x = ` ${s.toLowerCase()} `;
    for (let i = 0; i + 3 <= x.length; i++) g.add(x.slice(i, i + 3));
    return g;
  };
  const docs = texts.map(grams);
  return {
    embedderId: 'test:trigram',
    async search(query: string, k: number): Promise<ScoredIndex[]> {
      const q = grams(query);
      return docs
        .map((d, index) => {
          let shared = 0;
          for (const g of q) if (d.has(g)) shared++;
          return { index, score: shared / Math.sqrt(q.size * d.size) };
        })
        .sort((a, b) => b.score - a.score || a.index - b.index)
        .slice(0, k);
    },
  };
}

t.test('field mapping: heading path is the title field and the passage prefix', async (t) => {
  t.same(lexicalDocOf(chunks[3]), { title: 'Cardiology \n Copy', body: chunks[3].text });
  t.same(lexicalDocOf(chunks[4]), { body: chunks[4].text });
  t.equal(passageOf(chunks[0]), `Cardiology\n${chunks[0].text}`);
});

t.test('lexical mode: BM25 order, near-duplicate dropped, top_k cut, timings', async (t) => {
  const res = await searchChunks({ query: 'aspirin heart attack', chunks, lexical, mode: 'lexical', topK: 3 });
  t.equal(res.mode, 'lexical');
  t.same(res.hits.map((h) => h.index), [0, 5]);
  t.equal(res.hits[0].lexical_rank, 1);
  t.equal(res.hits[0].dense_rank, null);
  t.same(res.reranker, { status: 'skipped', reason: 'not requested' });
  t.type(res.timings.lexical_ms, 'number');
  t.type(res.timings.diversity_ms, 'number');
  t.equal(res.timings.dense_ms, undefined);
  const all = await searchChunks({ query: 'aspirin heart attack', chunks, lexical, mode: 'lexical', topK: 3, diversity: false });
  t.same(all.hits.map((h) => h.index).sort(), [0, 3, 5]);
});

t.test('dense and hybrid modes need a dense index', async (t) => {
  await t.rejects(searchChunks({ query: 'x', chunks, lexical, mode: 'dense', topK: 3 }), /needs a dense index/);
  const dense = trigramDense(chunks.map((c) => c.text));
  const res = await searchChunks({ query: 'vitamin bone', chunks, lexical, mode: 'dense', topK: 2, dense });
  t.equal(res.hits[0].index, 2);
  t.equal(res.hits[0].lexical_rank, null);
  t.equal(res.hits[0].dense_rank, 1);
});

t.test('hybrid: RRF over dense and lexical ranks, explain trace and summary', async (t) => {
  const dense = trigramDense(chunks.map((c) => c.text));
  const res = await searchChunks({ query: 'aspirin heart', chunks, lexical, mode: 'hybrid', topK: 3, dense, explain: true });
  const tr = res.trace!;
  t.same(tr.stages, ['lexical', 'dense', 'fusion', 'diversity', 'top_k']);
  t.equal(tr.rrf_k, 60);
  t.equal(tr.candidates_per_stage, 20);
  const lex = lexical.search('aspirin heart', 20).map((h) => h.index);
  const den = (await dense.search('aspirin heart', 20)).map((h) => h.index);
  for (const c of tr.candidates) {
    t.equal(c.lexical_rank, lex.indexOf(c.index) + 1 || null);
    t.equal(c.dense_rank, den.indexOf(c.index) + 1 || null);
    const expect = (c.lexical_rank ? 1 / (60 + c.lexical_rank) : 0) + (c.dense_rank ? 1 / (60 + c.dense_rank) : 0);
    t.ok(Math.abs(c.fused_score - Math.round(expect * 10_000) / 10_000) < 1e-9, `fused score of ${c.index}`);
  }
  // candidates come in fused order with non-increasing RRF scores
  t.same(tr.candidates.map((c) => c.fused_rank), tr.candidates.map((_, i) => i + 1));
  for (let i = 1; i < tr.candidates.length; i++) t.ok(tr.candidates[i].fused_score <= tr.candidates[i - 1].fused_score);
  // chunk 3 repeats chunk 0 almost word for word: the diversity filter drops it
  t.notOk(res.hits.some((h) => h.index === 3));
  const expected = tr.candidates.filter((c) => c.index !== 3).slice(0, 3).map((c) => c.index);
  t.same(res.hits.map((h) => h.index), expected);
  const dup = tr.candidates.find((c) => c.index === 3)!;
  t.equal(dup.dropped_reason, 'duplicate');
  t.equal(dup.duplicate_of, 0);
  t.equal(dup.final_rank, null);
  const dupInTop = dup.fused_rank <= 3;
  t.ok(dupInTop, "the duplicate ranked inside top_k before the filter");
  t.same(tr.summary, {
    moved_up: dupInTop ? res.hits.filter((h, i) => h.fused_rank <= 3 && h.fused_rank > i + 1).length : 0,
    moved_down: 0,
    unchanged: res.hits.filter((h, i) => h.fused_rank === i + 1).length,
    new: dupInTop ? 1 : 0,
    dropped: dupInTop ? 1 : 0,
  });
  t.type(res.timings.fusion_ms, 'number');
});

t.test('rerank: used reorders, deltas recorded; failures keep the fused order and say why', async (t) => {
  // Scores each passage by how many times "therapy" or "cohort" occurs: a real, checkable function.
  const rerank: RerankFn = async (_q, passages) => ({ status: 'used', scores: passages.map((p) => (p.match(/therapy|cohort/g) ?? []).length) });
  const res = await searchChunks({ query: 'aspirin heart', chunks, lexical, mode: 'lexical', topK: 2, rerank, explain: true });
  t.equal(res.reranker.status, 'used');
  t.equal(res.hits[0].index, 5);
  t.equal(res.hits[0].score, 2);
  const c5 = res.trace!.candidates.find((c) => c.index === 5)!;
  t.equal(c5.rerank_rank, 1);
  t.equal(c5.rerank_delta, c5.fused_rank - 1);
  t.ok(res.trace!.stages.includes('rerank'));
  t.ok(res.trace!.summary.moved_up >= 1);
  t.type(res.timings.rerank_ms, 'number');

  const plain = await searchChunks({ query: 'aspirin heart', chunks, lexical, mode: 'lexical', topK: 2 });
  const failed: RerankFn = async () => ({ status: 'failed', reason: 'onnx error' });
  const f = await searchChunks({ query: 'aspirin heart', chunks, lexical, mode: 'lexical', topK: 2, rerank: failed });
  t.same(f.reranker, { status: 'failed', reason: 'onnx error' });
  t.same(f.hits, plain.hits);
  const wrong: RerankFn = async () => ({ status: 'used', scores: [1] });
  t.equal((await searchChunks({ query: 'aspirin heart', chunks, lexical, mode: 'lexical', topK: 2, rerank: wrong })).reranker.status, 'failed');
  const absent = await searchChunks({
    query: 'aspirin heart', chunks, lexical, mode: 'lexical', topK: 2,
    rerankAbsent: { status: 'unavailable', reason: 'no reranker model' },
  });
  t.same(absent.reranker, { status: 'unavailable', reason: 'no reranker model' });
  const none = await searchChunks({ query: 'zzz', chunks, lexical, mode: 'lexical', topK: 2, rerank });
  t.same(none.hits, []);
  t.same(none.reranker, { status: 'skipped', reason: 'no candidates' });
});

t.test('candidates: max(20, 3 x top_k) by default, never below top_k', async (t) => {
  const r1 = await searchChunks({ query: 'aspirin', chunks, lexical, mode: 'lexical', topK: 10, explain: true });
  t.equal(r1.trace!.candidates_per_stage, 30);
  const r2 = await searchChunks({ query: 'aspirin', chunks, lexical, mode: 'lexical', topK: 5, candidates: 2, explain: true });
  t.equal(r2.trace!.candidates_per_stage, 5);
});
