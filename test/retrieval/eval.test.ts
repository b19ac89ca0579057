import t from 'tap';
import path from 'node:path';
import os from 'node:os';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { hitAt, mrrAt, ndcgAt, recallAt } from '../../src/retrieval/eval/metrics.ts';
import { runEval } from '../../src/retrieval/eval/run-eval.ts';
import { readQrels } from '../../src/retrieval/eval/beir.ts';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

t.test('metrics match the BEIR definitions', async (t) => {
  const rel = new Map([['a', 1], ['b', 1]]);
  const ranked = ['x', 'a', 'y', 'b'];
  // DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3)
  t.ok(Math.abs(ndcgAt(ranked, rel, 10) - (1 / Math.log2(3) + 1 / Math.log2(5)) / (1 + 1 / Math.log2(3))) < 1e-12);
  t.equal(ndcgAt(ranked, rel, 1), 0);
  t.equal(recallAt(ranked, rel, 2), 0.5);
  t.equal(recallAt(ranked, rel, 100), 1);
  t.equal(mrrAt(ranked, rel, 10), 0.5);
  t.equal(mrrAt(ranked, rel, 1), 0);
  t.equal(hitAt(ranked, rel, 5), 1);
  t.equal(hitAt(['x'], rel, 5), 0);
  // graded gains
  t.ok(Math.abs(ndcgAt(['b', 'a'], new Map([['a', 2], ['b', 1]]), 10) - (1 + 2 / Math.log2(3)) / (2 + 1 / Math.log2(3))) < 1e-12);
});

async function tinyBeir(t: { teardown(fn: () => unknown): void }) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'beir-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const docs = [
    { _id: 'd1', title: 'Aspirin and heart attacks', text: 'Daily aspirin lowers the risk of a first heart attack.' },
    { _id: 'd2', title: 'Statins', text: 'Statins lower LDL cholesterol in adults.' },
    { _id: 'd3', title: 'Vitamin D', text: 'Vitamin D supplements and bone density in older women.' },
    { _id: 'd4', title: 'Sleep', text: 'Short sleep is associated with weight gain.' },
  ];
  const queries = [
    { _id: 'q1', text: 'aspirin prevents heart attack' },
    { _id: 'q2', text: 'cholesterol lowering drugs' },
    { _id: 'q3', text: 'sleep duration and obesity' },
    { _id: 'q9', text: 'a query without judgements' },
  ];
  await writeFile(path.join(dir, 'corpus.jsonl'), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
  await writeFile(path.join(dir, 'queries.train.jsonl'), queries.map((d) => JSON.stringify(d)).join('\n') + '\n');
  await writeFile(path.join(dir, 'qrels.train.tsv'), 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td4\t1\nq3\td3\t0\n');
  return dir;
}

t.test('runEval runs the production ranking over a BEIR corpus', async (t) => {
  const dir = await tinyBeir(t);
  const qrels = await readQrels(path.join(dir, 'qrels.train.tsv'));
  t.same([...qrels.get('q3')!.keys()], ['d4'], 'zero-score judgements are not relevant');
  const res = await runEval({ corpus: path.join(dir, 'corpus.jsonl'), queries: path.join(dir, 'queries.train.jsonl'), qrels: path.join(dir, 'qrels.train.tsv'), mode: 'lexical' });
  t.equal(res.queries, 3);
  t.equal(res.documents, 4);
  // q1 and q3 find their document first; q2 ("cholesterol") too through the body
  t.equal(res.ndcg_at_10, 1);
  t.equal(res.recall_at_100, 1);
  t.equal(res.mrr_at_10, 1);
  t.equal(res.hit_at_5, 1);
  t.equal(res.fields, 'bm25f');
  t.same(res.bm25, { k1: 1.2, b: 0.65, bTitle: 0.5, titleWeight: 2 });
  await t.rejects(runEval({ corpus: path.join(dir, 'corpus.jsonl'), queries: path.join(dir, 'queries.train.jsonl'), qrels: path.join(dir, 'qrels.train.tsv'), mode: 'dense' }), { code: 'MODEL_UNAVAILABLE' });
});

t.test('npm run eval prints one JSON line; dense without a model fails with MODEL_UNAVAILABLE', async (t) => {
  const dir = await tinyBeir(t);
  // The script as `npm run eval` runs it, through the suite's TypeScript loader (what tsx does, for less CPU).
  const script = (...args: string[]) => [...SOURCE_LOADER_ARGS, 'scripts/eval.ts', ...args];
  const env = { ...process.env, DATA_DIR: path.join(dir, 'data'), MODELS_DIR: path.join(dir, 'models') };
  const { stdout } = await run(process.execPath, script('--dataset', dir, '--split', 'train', '--mode', 'lexical'), { cwd: root, env });
  const lines = stdout.trim().split('\n');
  t.equal(lines.length, 1);
  const out = JSON.parse(lines[0]);
  for (const k of ['ndcg_at_10', 'recall_at_100', 'mrr_at_10', 'hit_at_5', 'queries', 'seconds', 'mode']) t.ok(k in out, k);
  t.equal(out.mode, 'lexical');
  t.equal(out.queries, 3);
  const err = await run(process.execPath, script('--dataset', dir, '--split', 'train', '--mode', 'hybrid'), { cwd: root, env }).catch((e) => e);
  t.equal(err.code, 3);
  const body = JSON.parse(err.stderr.trim().split('\n').pop());
  t.equal(body.code, 'MODEL_UNAVAILABLE');
  t.match(body.error, /hybrid/);
  const bad = await run(process.execPath, script('--dataset', dir, '--mode', 'fuzzy'), { cwd: root, env }).catch((e) => e);
  t.equal(bad.code, 2);
});
