/**
 * The console's client-side evaluation and trace code (console/src/eval, console/src/search): its
 * means equal the server harness's (src/retrieval/eval/metrics.ts meanMetrics over queryMetrics),
 * its BEIR readers agree with src/retrieval/eval/beir.ts on the same files, hits become ranked
 * targets the way BEIR ranks documents, and the trace model agrees with a real search's trace
 * summary (search_collection with explain through app.inject).
 */
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { meanMetrics, queryMetrics } from '../../src/retrieval/eval/metrics.ts';
import { readCorpus, readQrels, readQueries } from '../../src/retrieval/eval/beir.ts';
import { latencySummary, rankedTargets, scoreRuns, sourceStem, type Qrels } from '../../console/src/eval/metrics.ts';
import { beirSet, listSet, parseCorpus, parseQrels, parseQueries, SetError } from '../../console/src/eval/parse-set.ts';
import { movement, movementCounts, rankRows, waterfall, type SearchTrace } from '../../console/src/search/trace-model.ts';
import { buildTestApp } from '../helper.ts';
import { seededRandom } from '../fixtures-gen/seeded-random.ts';

const rng = seededRandom;

t.test('means over queries equal the server harness (graded, missing and empty rankings)', async (t) => {
  for (let seed = 1; seed <= 20; seed++) {
    const r = rng(seed);
    const qrels: Qrels = new Map();
    const ranked = new Map<string, string[]>();
    const nq = 1 + Math.floor(r() * 12);
    for (let q = 0; q < nq; q++) {
      const rel = new Map<string, number>();
      const nrel = 1 + Math.floor(r() * 4);
      for (let i = 0; i < nrel; i++) rel.set(`d${Math.floor(r() * 40)}`, 1 + Math.floor(r() * 3));
      qrels.set(`q${q}`, rel);
      if (r() < 0.1) continue; // no answer at all for this query
      const list: string[] = [];
      const len = Math.floor(r() * 25);
      for (let i = 0; i < len; i++) {
        const d = `d${Math.floor(r() * 40)}`;
        if (!list.includes(d)) list.push(d);
      }
      ranked.set(`q${q}`, list);
    }
    const ours = scoreRuns(ranked, qrels, 5);
    const theirs = meanMetrics([...qrels].map(([q, rel]) => queryMetrics(ranked.get(q) ?? [], rel)));
    t.same(
      { ndcg_at_10: ours.ndcg_at_10, recall_at_100: ours.recall_at_100, mrr_at_10: ours.mrr_at_10, hit_at_5: ours.hit_at_k },
      theirs,
      `seed ${seed}`,
    );
    t.equal(ours.queries, qrels.size);
  }
  t.same(scoreRuns(new Map(), new Map(), 3), { ndcg_at_10: 0, recall_at_100: 0, mrr_at_10: 0, hit_at_k: 0, k: 3, queries: 0 });
  // Hit@K follows K.
  const qrels: Qrels = new Map([['q', new Map([['b', 1]])]]);
  t.equal(scoreRuns(new Map([['q', ['a', 'b']]]), qrels, 1).hit_at_k, 0);
  t.equal(scoreRuns(new Map([['q', ['a', 'b']]]), qrels, 2).hit_at_k, 1);
});

t.test('hits become ranked targets: documents once at their best rank, under the alias the judgements use', async (t) => {
  const hits = [
    { chunk_id: 11, document_id: 'D1', source: 'upload:doc-7.txt' },
    { chunk_id: 12, document_id: 'D1', source: 'upload:doc-7.txt' },
    { chunk_id: 30, document_id: 'D2', source: 'https://example.org/papers/attention.pdf?x=1' },
    { chunk_id: 40, document_id: 'D3', source: 'path:/srv/notes/a%2Fb.md' },
  ];
  t.same(rankedTargets(hits, new Map([['doc-7', 1]]), 'document'), ['doc-7', 'D2', 'D3']);
  t.same(rankedTargets(hits, new Map([['D2', 1]]), 'document'), ['D1', 'D2', 'D3']);
  t.same(rankedTargets(hits, new Map([['attention.pdf', 1]]), 'document'), ['D1', 'attention.pdf', 'D3']);
  t.same(rankedTargets(hits, new Map([['https://example.org/papers/attention.pdf?x=1', 1]]), 'document')[1], 'https://example.org/papers/attention.pdf?x=1');
  t.same(rankedTargets(hits, new Map([['12', 1]]), 'chunk'), ['11', '12', '30', '40']);
  t.equal(sourceStem('path:/srv/notes/a%2Fb.md'), 'a/b');
  t.equal(sourceStem('upload:corpus.v2.txt'), 'corpus.v2');
  t.equal(sourceStem('https://h/x/'), 'x');
});

t.test('BEIR readers agree with the server readers; list sets; errors name file and line', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'console-beir-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const corpus = [
    JSON.stringify({ _id: 'd1', title: 'Aspirin', text: 'Daily aspirin.' }),
    '',
    JSON.stringify({ _id: 2, text: 'Numeric id, no title.' }),
  ].join('\n');
  const queries = [JSON.stringify({ _id: 'q1', text: 'aspirin' }), JSON.stringify({ _id: 'q2', text: 'unjudged' })].join('\n');
  const qrels = 'query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\t2\t0\nq1\t2\t1\n\n';
  await writeFile(path.join(dir, 'c.jsonl'), corpus);
  await writeFile(path.join(dir, 'q.jsonl'), queries);
  await writeFile(path.join(dir, 'r.tsv'), qrels);
  t.same(parseCorpus(corpus), await readCorpus(path.join(dir, 'c.jsonl')));
  t.same(parseQueries(queries), await readQueries(path.join(dir, 'q.jsonl')));
  t.same([...parseQrels(qrels)].map(([q, m]) => [q, [...m]]), [...(await readQrels(path.join(dir, 'r.tsv')))].map(([q, m]) => [q, [...m]]));
  const set = beirSet({ corpus, queries, qrels });
  t.same(set.queries.map((q) => q.id), ['q1'], 'unjudged queries are left out');
  t.equal(set.corpus.length, 2);
  t.equal(set.level, 'document');

  t.throws(() => parseCorpus('{"_id":"a"}\nnot json'), new SetError('corpus.jsonl:2: not valid JSON'));
  t.throws(() => parseQueries('{"text":"x"}'), new SetError('queries.jsonl:1: missing _id'));
  t.throws(() => parseQrels('h\tc\ts\nq\td\tbad'), new SetError('qrels.tsv:2: score is not a number'));
  t.throws(() => beirSet({ queries, qrels: 'q9\td1\t1' }), /no query/);

  const list = listSet(JSON.stringify([{ question: 'Who?', expected: 'a.txt' }, { question: 'What?', expected_document_id: ['D1', 'D2'] }]));
  t.equal(list.level, 'document');
  t.same(list.queries, [{ id: 'q1', text: 'Who?' }, { id: 'q2', text: 'What?' }]);
  t.same([...list.qrels.get('q2')!.keys()], ['D1', 'D2']);
  const chunks = listSet('{"question":"x","expected_chunk_id":7}\n{"query":"y","chunk_id":"8"}');
  t.equal(chunks.level, 'chunk');
  t.same([...chunks.qrels.get('q1')!.keys()], ['7']);
  t.throws(() => listSet('{"question":"x","expected":"a"}\n{"question":"y","expected_chunk_id":1}'), /mixes documents and chunks/);
  t.throws(() => listSet('[{"question":"x"}]'), /list:1: missing expected/);
  t.throws(() => listSet(''), /no pairs/);
});

t.test('latency summary: nearest-rank percentiles', async (t) => {
  t.same(latencySummary([]), { mean_ms: 0, p50_ms: 0, p95_ms: 0, max_ms: 0 });
  const s = latencySummary(Array.from({ length: 20 }, (_, i) => 20 - i));
  t.same(s, { mean_ms: 10.5, p50_ms: 10, p95_ms: 19, max_ms: 20 });
});

t.test('trace model: waterfall in pipeline order; movements match the rule of the trace summary', async (t) => {
  const w = waterfall({ total_ms: 10, rerank_ms: 4, lexical_ms: 1, fusion_ms: 0.5, dense_ms: 2, embed_ms: 1 });
  t.same(w.bars.map((b) => b.stage), ['lexical', 'embed', 'dense', 'fusion', 'rerank']);
  t.same(w.bars.map((b) => b.start_ms), [0, 1, 2, 4, 4.5]);
  t.equal(w.other_ms, 1.5);
  t.equal(w.total_ms, 10);
  t.equal(waterfall({ load_ms: 3, lexical_ms: 1 }).total_ms, 4, 'no total: the sum');

  const c = (fused: number, final: number | null) => ({
    chunk_index: fused, lexical_rank: fused, lexical_score: 1, dense_rank: null, dense_score: null,
    fused_rank: fused, fused_score: 1, rerank_rank: final, rerank_score: 0, rerank_delta: final === null ? null : fused - final, final_rank: final,
  });
  t.equal(movement(c(3, 1), 3), 'up');
  t.equal(movement(c(1, 2), 3), 'down');
  t.equal(movement(c(2, 2), 3), 'unchanged');
  t.equal(movement(c(5, 3), 3), 'new');
  t.equal(movement(c(3, null), 3), 'dropped');
  t.equal(movement(c(4, null), 3), 'outside');

  // A real trace from the public API agrees with its own summary.
  const app = await buildTestApp(t);
  const headers = { 'content-type': 'application/json' };
  const docs = ['alpha beta gamma', 'beta gamma delta', 'gamma delta epsilon', 'delta epsilon zeta', 'beta beta beta alpha'];
  for (const [i, text] of docs.entries()) {
    const up = await app.inject({
      method: 'POST',
      url: '/v1/collections/trace/documents?wait_seconds=60',
      payload: text,
      headers: { 'content-type': 'text/plain', 'content-disposition': `attachment; filename="d${i}.txt"` },
    });
    t.equal(up.statusCode, 202, `upload ${i}`);
    t.equal(up.json().items[0].source, `d${i}.txt`, "the file name names the source");
  }
  const res = await app.inject({ method: 'POST', url: '/v1/collections/trace/search', headers, payload: { query: 'beta gamma', top_k: 2, explain: true } });
  t.equal(res.statusCode, 200, 'search answers');
  const body = res.json() as { trace: SearchTrace; timings_ms: Record<string, number>; results: unknown[] };
  const counts = movementCounts(body.trace, 2);
  const { moved_up, moved_down, unchanged, new: added, dropped } = body.trace.summary;
  t.same({ up: counts.up, down: counts.down, unchanged: counts.unchanged, new: counts.new, dropped: counts.dropped }, { up: moved_up, down: moved_down, unchanged, new: added, dropped });
  t.equal(rankRows(body.trace, 2).filter((r) => r.final_rank !== null).length, body.results.length);
  t.ok(rankRows(body.trace, 2, true).length >= rankRows(body.trace, 2).length);
  const wf = waterfall(body.timings_ms);
  t.ok(wf.bars.some((b) => b.stage === 'lexical'), 'lexical stage drawn');
  t.equal(wf.total_ms, body.timings_ms.total_ms);
});
