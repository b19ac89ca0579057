import t from 'tap';
import { OnnxReranker } from '../../src/retrieval/reranker.ts';
import { truncatePair } from '../../src/retrieval/embedders/onnx-session.ts';
import { MODEL_SPECS } from '../../src/retrieval/embedders/model-paths.ts';
import { EXPECTED, fixtureDir } from './model-fixtures.ts';

t.test('longest-first pair truncation keeps the budget and favours the shorter side', async (t) => {
  t.same(truncatePair(10, 20, 509), [10, 20], 'fits: nothing cut');
  t.same(truncatePair(10, 1000, 509), [10, 499], 'long passage cut to what the query leaves');
  t.same(truncatePair(1000, 10, 509), [499, 10], 'symmetric');
  t.same(truncatePair(300, 400, 509), [254, 255], 'both long: split evenly, the longer side gets the odd token');
  t.same(truncatePair(600, 700, 509), [254, 255]);
});

t.test('cross-encoder logits match the reference, in passage order, batched or not', async (t) => {
  const r = await OnnxReranker.load({ dir: fixtureDir(MODEL_SPECS.reranker.repo) });
  t.teardown(() => r.close());
  t.equal(r.id, 'onnx:Xenova/ms-marco-MiniLM-L-6-v2:q8');
  t.equal(r.maxLength, 512);
  const expected = EXPECTED.models.reranker.outputs.q8;
  const scores = await r.score(EXPECTED.query, EXPECTED.passages);
  t.equal(scores.length, EXPECTED.passages.length);
  scores.forEach((s, i) => t.ok(Math.abs(s - expected.logits[i]) < 1e-4, `passage ${i}: ${s} vs ${expected.logits[i]}`));
  // The long passage is cut longest-first to 512 tokens with both [SEP]s kept.
  t.equal(expected.input_ids[3].length, 512);
  for (let i = 0; i < EXPECTED.passages.length; i++) {
    const [single] = await r.score(EXPECTED.query, [EXPECTED.passages[i]]);
    t.ok(Math.abs(single - scores[i]) < 1e-5, `passage ${i} alone scores the same`);
  }
  t.same(await r.score(EXPECTED.query, []), [], 'no passages, no scores');
  const ac = new AbortController();
  ac.abort(new Error('gone'));
  await t.rejects(r.score('q', ['p'], ac.signal), /gone/);
});

t.test('a model folder without weights is refused with the missing files named', async (t) => {
  await t.rejects(OnnxReranker.load({ dir: fixtureDir('Xenova/nothing-here') }), /model files missing in .*nothing-here: config\.json/);
});
