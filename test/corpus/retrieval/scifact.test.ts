/**
 * BEIR SciFact (EVAL_DIR/scifact, train split) through the evaluation harness that `npm run eval`
 * uses: the production lexical ranking (analyzer, BM25F, diversity) over all 5,183 abstracts and
 * every judged train query. Floors sit a little under today's scores (nDCG@10 0.6988, Recall@100
 * 0.9314, MRR@10 0.6687, Hit@5 0.7627 with `npm run eval -- --dataset EVAL_DIR/scifact --split
 * train`); published BM25 on SciFact's test split is 0.665-0.679. A ranking change that loses more
 * than about 0.02 nDCG fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runEval } from '../../../src/retrieval/eval/run-eval.ts';
import { evalDirPath } from '../data-dirs.ts';

const dir = path.join(evalDirPath(), 'scifact');
const file = (name: string) => {
  const p = path.join(dir, name);
  if (!fs.existsSync(p)) throw new Error(`SciFact file missing: ${p} (EVAL_DIR must hold scifact/${name})`);
  return p;
};

const FLOORS = { ndcg_at_10: 0.68, recall_at_100: 0.92, mrr_at_10: 0.65, hit_at_5: 0.74 };

t.test('lexical retrieval on SciFact train queries stays at or above its floors', async (t) => {
  const corpus = file('corpus.jsonl');
  const queries = file('queries.train.jsonl');
  const qrels = file('qrels.train.tsv');

  // What the harness should evaluate, counted here from the files themselves.
  const docCount = fs.readFileSync(corpus, 'utf8').split('\n').filter((l) => l.trim()).length;
  const queryIds = new Set(fs.readFileSync(queries, 'utf8').split('\n').filter((l) => l.trim()).map((l) => (JSON.parse(l) as { _id: string })._id));
  const judged = new Set(
    fs
      .readFileSync(qrels, 'utf8')
      .split('\n')
      .slice(1)
      .map((l) => l.split('\t'))
      .filter((c) => c.length === 3 && Number(c[2]) > 0 && queryIds.has(c[0]!))
      .map((c) => c[0]!),
  );

  const res = await runEval({ corpus, queries, qrels, mode: 'lexical', signal: AbortSignal.timeout(120_000) });
  t.comment(`SciFact train, lexical: ${JSON.stringify({ ndcg_at_10: res.ndcg_at_10, recall_at_100: res.recall_at_100, mrr_at_10: res.mrr_at_10, hit_at_5: res.hit_at_5, queries: res.queries, seconds: res.seconds })}`);
  t.equal(res.documents, docCount, 'every abstract indexed');
  t.equal(res.documents, 5183);
  t.equal(res.queries, judged.size, 'every judged train query evaluated');
  t.equal(res.queries, 809);
  t.equal(res.mode, 'lexical');
  t.equal(res.fields, 'bm25f', 'the production field weighting');
  for (const [metric, floor] of Object.entries(FLOORS) as Array<[keyof typeof FLOORS, number]>) {
    t.ok(res[metric] >= floor, `${metric} ${res[metric]} >= ${floor}`);
    t.ok(res[metric] <= 1, `${metric} is a fraction`);
  }
});
