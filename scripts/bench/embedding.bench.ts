/**
 * Embedding and reranking throughput of the model layer (OnnxEmbedder, OnnxReranker) against a
 * bare onnxruntime-node session.run on the same batches of the same model: the overhead ratio
 * (target <= 1.15). Then sweeps of batch size, length bucketing and threads on the bare session,
 * and the effect of the best settings passed through the model layer's options.
 *
 * Models: random-weight ONNX files with exactly the architectures of all-MiniLM-L6-v2,
 * bge-small-en-v1.5 and ms-marco-MiniLM-L-6-v2, fp32 and int8 (scripts/bench/make-bench-models.py,
 * generated into data/bench-models/ on first run). Compute does not depend on weight values.
 *
 *   npm run bench:embedding
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { OnnxEmbedder } from '../../src/retrieval/embedders/onnx-embedder.ts';
import { OnnxReranker } from '../../src/retrieval/reranker.ts';
import { MODEL_SPECS, WEIGHT_FILES, type ModelSpec, type WeightDtype } from '../../src/retrieval/embedders/model-paths.ts';
import { BareSession, BareTokenizer, buildFeed, makeBatches, poolRow, type Encoded, type Feed } from './bare-onnx.ts';
import { abstracts } from './inputs.ts';
import { BENCH_MODELS_DIR, QUICK, ROOT, SectionBuilder, comparePair, isMain, log, measureRoundRobin, round, runStandalone } from './harness.ts';
import type { Section } from './report.ts';

export const OVERHEAD_TARGET = 1.15;

/** Generates the architecture-equivalent models when they are missing. */
export function ensureBenchModels(): string {
  const marker = path.join(BENCH_MODELS_DIR, 'Xenova', 'ms-marco-MiniLM-L-6-v2', 'onnx', 'model_quantized.onnx');
  if (!fs.existsSync(marker)) {
    log('generating architecture-equivalent models into data/bench-models (about 30 s, 380 MB)');
    execFileSync('/usr/bin/python3', [path.join(ROOT, 'scripts', 'bench', 'make-bench-models.py'), BENCH_MODELS_DIR], { stdio: 'inherit' });
  }
  return BENCH_MODELS_DIR;
}

const modelDirOf = (spec: ModelSpec) => path.join(BENCH_MODELS_DIR, ...spec.repo.split('/'));

/** Passages the size of real chunks: SciFact abstracts (title + text, ~1,500 chars, 100-450 tokens). */
export function passages(n: number, offset = 0): string[] {
  return abstracts()
    .slice(offset, offset + n)
    .map((a) => `${a.title}\n${a.text}`);
}

interface Prepared {
  encoded: Encoded[];
  feeds: Feed[];
  batches: number[][];
  realTokens: number;
  paddedTokens: number;
}

function prepare(encoded: Encoded[], batchSize: number, sort: boolean, padId: number, inputNames: readonly string[]): Prepared {
  const batches = makeBatches(
    encoded.map((e) => e.ids.length),
    batchSize,
    sort,
  );
  const feeds = batches.map((b) =>
    buildFeed(
      b.map((i) => encoded[i]),
      padId,
      inputNames,
    ),
  );
  return {
    encoded,
    feeds,
    batches,
    realTokens: feeds.reduce((n, f) => n + f.realTokens, 0),
    paddedTokens: feeds.reduce((n, f) => n + f.rows * f.seqLen, 0),
  };
}

function mid(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

export async function runEmbedding(): Promise<Section> {
  ensureBenchModels();
  const runs = QUICK ? 2 : 4;
  const b = new SectionBuilder('embedding', '3. Embedding and reranking throughput', {
    warmup: 1,
    runs,
    models_dir: path.relative(ROOT, BENCH_MODELS_DIR),
    quantization:
      'int8 as onnxruntime quantize_dynamic writes it: DynamicQuantizeLinear + MatMulInteger (int8 per-channel weights) + scale Mul, which onnxruntime fuses at load (all-MiniLM-L6-v2: 18 DynamicQuantizeMatMul + 18 MatMulIntegerToFloat + 6 Gelu, checked with optimizedModelFilePath); int8 embedding tables with DequantizeLinear; attention score MatMuls in float',
  });
  const overhead = b.table(
    'Model layer vs bare onnxruntime session.run, same model and same batches (runtime-default threads, the model layer\'s default batch size)',
    ['model', 'weights', 'inputs', 'real tokens', 'batch', 'ours ms', 'ours items/s', 'ours tokens/s', 'bare ms', 'bare items/s', 'bare tokens/s', 'overhead, medians (ours / bare)', 'overhead, best runs (ours / bare)', 'spread ours / bare', 'max |diff| of outputs'],
  );
  const raw: Record<string, unknown> = {};
  const N_FAST = QUICK ? 8 : 32;
  const N_ACC = QUICK ? 4 : 8;
  const N_PAIRS = QUICK ? 8 : 20;
  const query = 'What is the effect of vitamin D supplementation on bone mineral density in older adults?';

  const models: Array<{ spec: ModelSpec; n: number }> = [
    { spec: MODEL_SPECS.fast, n: N_FAST },
    { spec: MODEL_SPECS.accurate, n: N_ACC },
    { spec: MODEL_SPECS.reranker, n: N_PAIRS },
  ];
  const dtypes: WeightDtype[] = ['q8', 'fp32'];
  // External load on a shared machine only ever adds time, so the best run of each side is the
  // steadiest estimate of the intrinsic overhead; the ratio of medians is shown beside it.
  const overheadRatios: number[] = [];
  const medianRatios: number[] = [];
  for (const { spec, n } of models) {
    const dir = modelDirOf(spec);
    const tok = await BareTokenizer.load(dir);
    const texts = passages(n);
    for (const dtype of dtypes) {
      const name = `${spec.repo.split('/')[1]} ${dtype}`;
      log(`embedding overhead: ${name}`);
      const bare = await BareSession.create(path.join(dir, WEIGHT_FILES[dtype]), { threads: 0 });
      let oursRun: () => Promise<unknown>;
      let close: () => Promise<void>;
      let batchSize: number;
      let diff = NaN;
      let encoded: Encoded[];
      if (spec.kind === 'embedder') {
        const e = await OnnxEmbedder.load({ dir, spec, prefer: dtype });
        batchSize = e.batchSize;
        encoded = texts.map((t) => tok.single(t, e.maxLength));
        const prep = prepare(encoded, batchSize, true, tok.pad, bare.inputNames);
        const outs = await bare.runAll(prep.feeds);
        const vecs = await e.embed(texts, 'passage');
        prep.batches.forEach((batch, bi) => {
          const t = outs[bi].last_hidden_state;
          const f = prep.feeds[bi];
          batch.forEach((idx, row) => {
            const v = poolRow(t.data as Float32Array, f.mask, row, f.seqLen, t.dims[2], spec.pooling ?? 'mean');
            diff = Number.isNaN(diff) ? maxAbsDiff(v, vecs[idx]) : Math.max(diff, maxAbsDiff(v, vecs[idx]));
          });
        });
        oursRun = () => e.embed(texts, 'passage');
        close = () => e.close();
        raw[name] = { prep: { real: prep.realTokens, padded: prep.paddedTokens, batches: prep.batches.length } };
        const pair = await comparePair(oursRun, () => bare.runAll(prep.feeds), { warmup: 1, runs });
        pushOverhead(overhead, name, dtype, `${n} passages`, prep, batchSize, n, pair, diff);
        overheadRatios.push(pair.ours.min_ms / pair.baseline.min_ms);
        medianRatios.push(pair.ours.median_ms / pair.baseline.median_ms);
        Object.assign(raw[name] as object, pair);
      } else {
        const r = await OnnxReranker.load({ dir, spec, prefer: dtype });
        batchSize = r.batchSize;
        encoded = texts.map((t) => tok.pair(query, t, r.maxLength));
        const prep = prepare(encoded, batchSize, true, tok.pad, bare.inputNames);
        const outs = await bare.runAll(prep.feeds);
        const scores = await r.score(query, texts);
        prep.batches.forEach((batch, bi) => {
          const logits = outs[bi].logits.data as Float32Array;
          batch.forEach((idx, row) => {
            const d = Math.abs(logits[row] - scores[idx]);
            diff = Number.isNaN(diff) ? d : Math.max(diff, d);
          });
        });
        oursRun = () => r.score(query, texts);
        close = () => r.close();
        const pair = await comparePair(oursRun, () => bare.runAll(prep.feeds), { warmup: 1, runs });
        pushOverhead(overhead, name, dtype, `${n} (query, passage) pairs`, prep, batchSize, n, pair, diff);
        overheadRatios.push(pair.ours.min_ms / pair.baseline.min_ms);
        medianRatios.push(pair.ours.median_ms / pair.baseline.median_ms);
        raw[name] = { prep: { real: prep.realTokens, padded: prep.paddedTokens, batches: prep.batches.length }, ...pair };
      }
      await close();
      await bare.release();
    }
  }
  const worst = Math.max(...overheadRatios);
  b.check(
    `model-layer overhead over bare onnxruntime <= ${OVERHEAD_TARGET}`,
    worst <= OVERHEAD_TARGET,
    `best-run ratios: worst ${round(worst, 3)}, median ${round(mid(overheadRatios), 3)} over ${overheadRatios.length} model/weight combinations; ratios of medians: worst ${round(Math.max(...medianRatios), 3)}, median ${round(mid(medianRatios), 3)}`,
  );

  // ---- query latency: one short query, the warm retrieve_chunks case
  const qlat = b.table('One query embedding (short text), latency', ['model', 'ours p50 ms', 'ours p95 ms', 'bare p50 ms', 'bare p95 ms', 'overhead ms (p50)']);
  for (const spec of [MODEL_SPECS.fast, MODEL_SPECS.accurate]) {
    const dir = modelDirOf(spec);
    const tok = await BareTokenizer.load(dir);
    const e = await OnnxEmbedder.load({ dir, spec, prefer: 'q8' });
    const bare = await BareSession.create(path.join(dir, WEIGHT_FILES.q8), { threads: 0 });
    const q = (spec.queryInstruction ?? '') + query;
    const feed = [buildFeed([tok.single(q, e.maxLength)], tok.pad, bare.inputNames)];
    const pair = await comparePair(() => e.embed([query], 'query'), () => bare.runAll(feed), { warmup: 3, runs: QUICK ? 6 : 20 });
    qlat.rows.push([`${spec.repo.split('/')[1]} q8`, pair.ours.median_ms, pair.ours.p95_ms, pair.baseline.median_ms, pair.baseline.p95_ms, round(pair.ours.median_ms - pair.baseline.median_ms, 2)]);
    raw[`query ${spec.repo}`] = pair;
    await e.close();
    await bare.release();
  }

  // ---- sweeps on the bare session: the fast model, int8 (the default)
  const spec = MODEL_SPECS.fast;
  const dir = modelDirOf(spec);
  const tok = await BareTokenizer.load(dir);
  const sweepTexts = passages(QUICK ? 16 : 32, 1000);
  const encoded = sweepTexts.map((t) => tok.single(t, spec.maxLength));
  const sweepRuns = { warmup: 1, runs: QUICK ? 2 : 3 };
  const file = path.join(dir, WEIGHT_FILES.q8);

  // Variants of one sweep run round-robin, so that drifting load on the machine hits them alike.
  const rounds = QUICK ? 2 : 4;
  const bs = b.table(
    `Batch size (bare session, ${spec.repo.split('/')[1]} int8, ${sweepTexts.length} passages sorted by length, runtime-default threads; ${rounds} rounds round-robin)`,
    ['batch size', 'ms', 'tokens/s', 'padding overhead', 'spread'],
  );
  const base = await BareSession.create(file, { threads: 0 });
  let best = { size: spec.batchSize, tps: 0 };
  const bsRaw: Record<string, unknown> = {};
  const sizes = QUICK ? [1, 8, 16] : [1, 4, 8, 16, 32];
  const preps = sizes.map((size) => prepare(encoded, size, true, tok.pad, base.inputNames));
  const bsSamples = await measureRoundRobin(
    preps.map((p) => () => base.runAll(p.feeds)),
    rounds,
  );
  sizes.forEach((size, i) => {
    const s = bsSamples[i];
    const prep = preps[i];
    const tps = prep.realTokens / (s.median_ms / 1000);
    if (tps > best.tps) best = { size, tps };
    bs.rows.push([size, s.median_ms, round(tps, 0), `${round((prep.paddedTokens / prep.realTokens - 1) * 100, 1)} %`, s.spread]);
    bsRaw[size] = s;
  });
  // A batch of 8 gives several batches even for the quick set, so the order matters.
  const BUCKET_BATCH = 8;
  const buck = b.table(`Length bucketing (bare session, batch ${BUCKET_BATCH}, same ${sweepTexts.length} passages, round-robin)`, ['order', 'ms', 'tokens/s', 'padding overhead', 'spread']);
  const bucketRaw: Record<string, unknown> = {};
  const orders = [true, false].map((sort) => ({ sort, prep: prepare(encoded, BUCKET_BATCH, sort, tok.pad, base.inputNames) }));
  const bucketSamples = await measureRoundRobin(
    orders.map((o) => () => base.runAll(o.prep.feeds)),
    rounds,
  );
  orders.forEach(({ sort, prep }, i) => {
    const s = bucketSamples[i];
    buck.rows.push([
      sort ? 'sorted by length, padded per batch' : 'arrival order, padded per batch',
      s.median_ms,
      round(prep.realTokens / (s.median_ms / 1000), 0),
      `${round((prep.paddedTokens / prep.realTokens - 1) * 100, 1)} %`,
      s.spread,
    ]);
    bucketRaw[sort ? 'sorted' : 'arrival'] = s;
  });
  const inputNames = base.inputNames;
  await base.release();

  const th = b.table(`Threads (bare session, batch ${spec.batchSize}, sorted, round-robin)`, ['intra-op threads', 'spinning', 'ms', 'tokens/s', 'spread']);
  const threadRaw: Record<string, unknown> = {};
  let bestThreads = { threads: 0, spinning: true, tps: 0 };
  const prepTh = prepare(encoded, spec.batchSize, true, tok.pad, inputNames);
  const threadOptions: Array<{ threads: number; spinning: boolean }> = [
    { threads: 0, spinning: true },
    { threads: 1, spinning: true },
    { threads: 2, spinning: true },
    { threads: 2, spinning: false },
  ];
  const chosen = QUICK ? threadOptions.slice(0, 2) : threadOptions;
  const sessions = await Promise.all(chosen.map((o) => BareSession.create(file, o)));
  const thSamples = await measureRoundRobin(
    sessions.map((sess) => () => sess.runAll(prepTh.feeds)),
    rounds,
  );
  chosen.forEach((o, i) => {
    const s = thSamples[i];
    const tps = prepTh.realTokens / (s.median_ms / 1000);
    if (tps > bestThreads.tps) bestThreads = { ...o, tps };
    th.rows.push([o.threads === 0 ? 'runtime default' : o.threads, o.spinning ? 'on (default)' : 'off', s.median_ms, round(tps, 0), s.spread]);
    threadRaw[`${o.threads}-${o.spinning}`] = s;
  });
  for (const sess of sessions) await sess.release();

  // ---- the best bare settings passed through the model layer's options
  const eff = b.table('Best settings through the model layer (OnnxEmbedder options), same passages', ['setting', 'ms', 'tokens/s', 'x vs defaults']);
  const eDefault = await OnnxEmbedder.load({ dir, spec, prefer: 'q8' });
  const eBest = await OnnxEmbedder.load({ dir, spec, prefer: 'q8', batchSize: best.size, threads: bestThreads.threads });
  const pair = await comparePair(() => eBest.embed(sweepTexts, 'passage'), () => eDefault.embed(sweepTexts, 'passage'), sweepRuns);
  const realTokens = encoded.reduce((n, e) => n + e.ids.length, 0);
  eff.rows.push([`defaults (batch ${eDefault.batchSize}, threads runtime default)`, pair.baseline.median_ms, round(realTokens / (pair.baseline.median_ms / 1000), 0), 1]);
  eff.rows.push([`batch ${best.size}, threads ${bestThreads.threads || 'runtime default'}`, pair.ours.median_ms, round(realTokens / (pair.ours.median_ms / 1000), 0), pair.speedup]);
  await eDefault.close();
  await eBest.close();

  b.note(
    `Best measured here: batch size ${best.size}, ${bestThreads.threads === 0 ? 'runtime-default threads' : `${bestThreads.threads} intra-op thread(s)`}` +
      `${bestThreads.spinning ? '' : ' with spinning off'}. The model layer's defaults are batch ${spec.batchSize}, runtime-default threads (ONNX_THREADS=0).`,
  );
  b.note(
    'On a 2-core machine shared with other work these sweeps are noisy (see the spread column); the variants of each sweep run round-robin so drift hits them alike. ' +
      'Change a default only on a difference that repeats across runs.',
  );
  b.note(
    'Spinning: onnxruntime worker threads busy-wait between ops by default. On a machine shared with other work (other requests, other processes) that burns CPU the ' +
      'other threads need; `session.intra_op.allow_spinning = "0"` trades a little latency for that CPU. Compare the two rows for 2 threads above.',
  );
  b.section.data = { overhead: raw, batch_sizes: bsRaw, bucketing: bucketRaw, threads: threadRaw, best: { batch: best, threads: bestThreads }, via_model_layer: pair };
  return b.finish();
}

function pushOverhead(
  t: { rows: Array<Array<string | number | boolean | null>> },
  name: string,
  dtype: WeightDtype,
  inputs: string,
  prep: Prepared,
  batchSize: number,
  n: number,
  pair: { ours: { median_ms: number; min_ms: number; spread: number }; baseline: { median_ms: number; min_ms: number; spread: number } },
  diff: number,
): void {
  const o = pair.ours.median_ms;
  const bl = pair.baseline.median_ms;
  t.rows.push([
    name.replace(` ${dtype}`, ''),
    dtype === 'q8' ? 'int8' : 'fp32',
    inputs,
    prep.realTokens,
    batchSize,
    o,
    round(n / (o / 1000), 2),
    round(prep.realTokens / (o / 1000), 0),
    bl,
    round(n / (bl / 1000), 2),
    round(prep.realTokens / (bl / 1000), 0),
    round(o / bl, 3),
    round(pair.ours.min_ms / pair.baseline.min_ms, 3),
    `${pair.ours.spread} / ${pair.baseline.spread}`,
    Number.isNaN(diff) ? null : Number(diff.toExponential(2)),
  ]);
}

if (isMain(import.meta.url)) await runStandalone(runEmbedding);
