import t from 'tap';
import { OnnxEmbedder } from '../../src/retrieval/embedders/onnx-embedder.ts';
import { MODEL_SPECS } from '../../src/retrieval/embedders/model-paths.ts';
import { EXPECTED, fixtureDir, maxAbsDiff } from './model-fixtures.ts';

// The expected vectors come from an independent numpy implementation (tokenizer, forward pass,
// pooling, normalisation); both sides compute in float32/float64, so they agree to ~1e-7.
const TOL = 1e-5;

const fastDir = fixtureDir(MODEL_SPECS.fast.repo);
const accurateDir = fixtureDir(MODEL_SPECS.accurate.repo);

// One instance of the fast model serves the tests that do not need other settings (loading
// starts a worker thread, which takes a while on a busy machine).
const fast = await OnnxEmbedder.load({ dir: fastDir, spec: MODEL_SPECS.fast });
t.teardown(() => fast.close());

t.test('fast embedder (quantized weights, mean pooling) matches the reference', async (t) => {
  const e = fast;
  t.equal(e.id, 'onnx:Xenova/all-MiniLM-L6-v2:q8', 'quantized weights chosen by default');
  t.equal(e.dtype, 'q8');
  t.equal(e.dimension, EXPECTED.models.fast.dimension);
  t.equal(e.maxLength, 256);
  const vectors = await e.embed(EXPECTED.texts, 'passage');
  t.equal(vectors.length, EXPECTED.texts.length);
  vectors.forEach((v, i) => {
    t.ok(v instanceof Float32Array);
    t.ok(maxAbsDiff(v, EXPECTED.models.fast.outputs.q8.passage[i]) < TOL, `text ${i} matches (${maxAbsDiff(v, EXPECTED.models.fast.outputs.q8.passage[i])})`);
    t.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5, `text ${i} is unit length`);
  });
  // The long text is truncated to 256 tokens with its closing [SEP] kept.
  t.equal(EXPECTED.models.fast.outputs.q8.input_ids[6].length, 256);
  // all-MiniLM has no query instruction: a query embeds exactly like a passage.
  const q = await e.embed([EXPECTED.texts[1]], 'query');
  t.ok(maxAbsDiff(q[0], vectors[1]) < 1e-6, 'query == passage for the fast model');
  t.not(maxAbsDiff(EXPECTED.models.fast.outputs.q8.passage[1], EXPECTED.models.fast.outputs.fp32.passage[1]), 0, 'q8 and fp32 references differ, so the check tells them apart');
});

t.test('fp32 weights when preferred', async (t) => {
  const e = await OnnxEmbedder.load({ dir: fastDir, spec: MODEL_SPECS.fast, prefer: 'fp32' });
  t.teardown(() => e.close());
  t.equal(e.id, 'onnx:Xenova/all-MiniLM-L6-v2:fp32');
  const vectors = await e.embed(EXPECTED.texts, 'passage');
  vectors.forEach((v, i) => t.ok(maxAbsDiff(v, EXPECTED.models.fast.outputs.fp32.passage[i]) < TOL, `text ${i}`));
});

t.test('accurate embedder: fp32 fallback, CLS pooling, query instruction on queries only', async (t) => {
  const e = await OnnxEmbedder.load({ dir: accurateDir, spec: MODEL_SPECS.accurate });
  t.teardown(() => e.close());
  t.equal(e.id, 'onnx:Xenova/bge-small-en-v1.5:fp32', 'falls back to model.onnx when there is no quantized file');
  t.equal(e.dimension, EXPECTED.models.accurate.dimension);
  const ref = EXPECTED.models.accurate.outputs.fp32;
  const passages = await e.embed(EXPECTED.texts, 'passage');
  passages.forEach((v, i) => t.ok(maxAbsDiff(v, ref.passage[i]) < TOL, `passage ${i}`));
  const queries = await e.embed(EXPECTED.texts, 'query');
  queries.forEach((v, i) => {
    t.ok(maxAbsDiff(v, ref.query![i]) < TOL, `query ${i} has the instruction`);
    t.ok(maxAbsDiff(v, passages[i]) > 1e-3, `query ${i} differs from its passage embedding`);
  });
  const [withInstruction] = await e.embed([EXPECTED.bge_instruction + EXPECTED.texts[0]], 'passage');
  t.ok(maxAbsDiff(withInstruction, queries[0]) < 1e-6, 'query = passage of instruction + text');
});

t.test('batching: one call of five equals five single calls, in order', async (t) => {
  const e = fast;
  const texts = [EXPECTED.texts[6], 'a', EXPECTED.texts[1], 'hello world', EXPECTED.texts[3]];
  const batched = await e.embed(texts, 'passage');
  for (let i = 0; i < texts.length; i++) {
    const [single] = await e.embed([texts[i]], 'passage');
    t.ok(maxAbsDiff(batched[i], single) < 1e-5, `text ${i}: batched (padded) == single`);
  }
  // 40 texts of mixed lengths: three batches of 16, reordered by length inside, restored on output.
  const many = Array.from({ length: 40 }, (_, i) => texts[i % 5] + ' x'.repeat(i % 7));
  const all = await e.embed(many, 'passage');
  for (const i of [0, 13, 27, 39]) {
    const [single] = await e.embed([many[i]], 'passage');
    t.ok(maxAbsDiff(all[i], single) < 1e-5, `text ${i} of 40 in order`);
  }
  t.same(await e.embed([], 'passage'), [], 'no texts, no vectors');
});

t.test('max length is configurable; an aborted signal rejects at once and the model stays usable', async (t) => {
  const e = await OnnxEmbedder.load({ dir: fastDir, spec: MODEL_SPECS.fast, maxLength: 16, batchSize: 1 });
  t.teardown(() => e.close());
  t.equal(e.maxLength, 16);
  const [short] = await e.embed([EXPECTED.texts[6]], 'passage');
  t.ok(maxAbsDiff(short, EXPECTED.models.fast.outputs.q8.passage[6]) > 1e-3, 'a 16-token cut differs from the 256-token one');
  const ac = new AbortController();
  ac.abort(new Error('client went away'));
  await t.rejects(e.embed(['x', 'y'], 'passage', ac.signal), /client went away/);
  const later = new AbortController();
  const pending = e.embed(Array.from({ length: 200 }, (_, i) => `text ${i}`), 'passage', later.signal);
  later.abort(new Error('timed out'));
  await t.rejects(pending, /timed out/);
  const [again] = await e.embed([EXPECTED.texts[6]], 'passage');
  t.same(Array.from(again), Array.from(short), 'same result after a cancelled request');
  t.equal(e.alive, true);
  await e.close();
  t.equal(e.alive, false, 'closed: the worker is gone');
  await t.rejects(e.embed(['x'], 'passage'), /model closed/);
});

t.test('the event loop keeps turning while a large batch embeds', async (t) => {
  const e = fast;
  // Large enough (a few hundred ms) that one preempted timer on a loaded machine is a small part of it.
  const texts = Array.from({ length: 1200 }, (_, i) => `${EXPECTED.texts[i % 5]} document ${i} ${'solar energy growth '.repeat(i % 20)}`);
  let ticks = 0;
  let maxGap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    ticks++;
  }, 5);
  const started = performance.now();
  const vectors = await e.embed(texts, 'passage');
  const ms = performance.now() - started;
  clearInterval(timer);
  t.equal(vectors.length, 1200);
  t.ok(ticks > 0, `timers ran during embedding (${ticks} ticks)`);
  // Relative to the embedding's own duration, so a loaded machine slows both alike: run on this
  // thread, the batch would stall the loop for about all of it.
  t.ok(maxGap < ms / 2, `longest event-loop stall ${maxGap.toFixed(0)} ms of ${ms.toFixed(0)} ms embedding`);
  t.comment(`tiny fast model: ${(texts.length / (ms / 1000)).toFixed(0)} texts/s, longest stall ${maxGap.toFixed(1)} ms`);
});

t.test('loading fails with a reason when files are missing or the dir holds another kind of model', async (t) => {
  await t.rejects(OnnxEmbedder.load({ dir: fixtureDir('Xenova/not-there'), spec: MODEL_SPECS.fast }), /model files missing in .*config\.json, tokenizer\.json, tokenizer_config\.json, onnx\/model_quantized\.onnx \(or onnx\/model\.onnx\)/);
  await t.rejects(OnnxEmbedder.load({ dir: fastDir, spec: MODEL_SPECS.reranker }), /not an embedding model/);
  await t.rejects(OnnxEmbedder.load({ dir: fixtureDir(MODEL_SPECS.reranker.repo), spec: MODEL_SPECS.fast }), /no \[batch, tokens, hidden\] output/);
});
