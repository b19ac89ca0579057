/**
 * The knowledge base's mutable lexical index (src/kb/lexical-index.ts) at collection scale: add
 * throughput (time-sliced, with the longest event-loop stall), heap per 100k chunks, query latency
 * p50/p95 over SciFact's train queries, removal + compaction, and the binary snapshot's size,
 * write and load times. Chunks: SciFact abstracts (title as heading path) replicated with a
 * distinguishing suffix up to the target count; generated text when SciFact is absent.
 *
 *   npm run bench:kb-lexical            (EVAL_DIR defaults to ../shared/eval; BENCH_QUICK=1: 10k only)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { CollectionLexicalIndex, type LexicalChunk } from '../../src/kb/lexical-index.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';

const EVAL_DIR = process.env.EVAL_DIR ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', '..', 'shared', 'eval');
const SIZES = process.env.BENCH_QUICK === '1' ? [10_000] : [10_000, 100_000];
const K = 60; // retrieve_chunks' candidate count for top_k 20
const NON_ASCII = /[^\x00-\x7f]/;

function readJsonl<T>(file: string): T[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function sources(): { docs: Array<{ title: string; text: string }>; queries: string[]; kind: string } {
  const corpus = path.join(EVAL_DIR, 'scifact', 'corpus.jsonl');
  const queries = path.join(EVAL_DIR, 'scifact', 'queries.train.jsonl');
  if (fs.existsSync(corpus) && fs.existsSync(queries)) {
    return {
      docs: readJsonl<{ title: string; text: string }>(corpus),
      queries: readJsonl<{ text: string }>(queries).map((q) => q.text),
      kind: 'SciFact',
    };
  }
  const r = rng(1);
  const vocab = Array.from({ length: 20000 }, (_, i) => `w${i.toString(36)}`);
  const pick = () => vocab[Math.floor(vocab.length * Math.pow(r(), 3))];
  const docs = Array.from({ length: 5000 }, () => ({
    title: Array.from({ length: 8 }, pick).join(' '),
    text: Array.from({ length: 200 }, pick).join(' '),
  }));
  const qs = Array.from({ length: 500 }, () => Array.from({ length: 6 }, pick).join(' '));
  return { docs, queries: qs, kind: 'generated' };
}

function chunksOf(docs: Array<{ title: string; text: string }>, n: number): LexicalChunk[] {
  const out: LexicalChunk[] = [];
  for (let i = 0; i < n; i++) {
    const d = docs[i % docs.length];
    const copy = Math.floor(i / docs.length);
    out.push({ id: i + 1, text: copy === 0 ? d.text : `${d.text} copy${copy} part${i % 97}`, heading_path: d.title ? [d.title] : [] });
  }
  return out;
}

const q = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const r2 = (x: number) => Math.round(x * 100) / 100;
const gc = (globalThis as { gc?: () => void }).gc;

function heap(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
}

/** CPU milliseconds (user + system) of this process since `from`. */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1000;
};

/**
 * Query latency as wall time and as this process's CPU time: on a shared machine (other jobs on
 * the cores) wall time includes waiting for a core; CPU time is what the query itself costs.
 */
function latencies(idx: CollectionLexicalIndex, queries: string[], filter?: (id: number) => boolean) {
  for (const s of queries.slice(0, 50)) idx.search(s, K, filter); // warm-up
  const wall: number[] = [];
  const cpu: number[] = [];
  for (const s of queries) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    idx.search(s, K, filter);
    wall.push(performance.now() - t0);
    cpu.push(cpuMs(c0));
  }
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { wall_p50: r2(q(wall, 0.5)), wall_p95: r2(q(wall, 0.95)), cpu_p50: r2(q(cpu, 0.5)), cpu_p95: r2(q(cpu, 0.95)) };
}

async function main(): Promise<void> {
  const { docs, queries, kind } = sources();
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log(`kb-lexical bench: ${kind} (${docs.length} texts, ${queries.length} queries), k=${K}, node ${process.version}, ${os.cpus().length} CPUs${gc ? '' : ' (no --expose-gc: heap figures are rough)'}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-lexical-bench-'));
  try {
    for (const n of SIZES) {
      const chunks = chunksOf(docs, n);
      // Flatten the texts (concatenations) now, so the heap figure below is the index's own.
      for (const c of chunks) NON_ASCII.test(c.text);
      const analyzer = new Analyzer();
      const before = heap();
      const idx = new CollectionLexicalIndex(analyzer);
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      await idx.addSliced(chunks);
      const addMs = performance.now() - t0;
      const addCpu = cpuMs(c0);
      loop.disable();
      const heapDelta = heap() - before;
      const lat = latencies(idx, queries);
      const filtered = latencies(idx, queries, (id) => id % 10 === 0);

      const t1 = performance.now();
      const c1 = process.cpuUsage();
      const buf = await idx.serializeSliced();
      const serializeMs = performance.now() - t1;
      const serializeCpu = cpuMs(c1);
      const file = path.join(tmp, `lexical-${n}.bin`);
      fs.writeFileSync(file, buf);
      const t2 = performance.now();
      const c2 = process.cpuUsage();
      const loaded = await CollectionLexicalIndex.deserializeSliced(fs.readFileSync(file), new Analyzer());
      const loadMs = performance.now() - t2;
      const loadCpu = cpuMs(c2);
      const same = queries.slice(0, 100).every((s) => JSON.stringify(loaded.search(s, K)) === JSON.stringify(idx.search(s, K)));

      // Remove 30% (crosses the 25% compaction threshold once), then query again.
      const victims = chunks.filter((c) => c.id % 10 < 3).map((c) => c.id);
      const t3 = performance.now();
      idx.remove(victims.slice(0, Math.floor(victims.length * 0.8)));
      const removeMs = performance.now() - t3;
      const t4 = performance.now();
      const c4 = process.cpuUsage();
      idx.remove(victims.slice(Math.floor(victims.length * 0.8)));
      const removeCompactMs = performance.now() - t4;
      const compactCpu = cpuMs(c4);
      const afterRemove = latencies(idx, queries);

      console.log(
        JSON.stringify(
          {
            chunks: n,
            load_average: os.loadavg()[0],
            add_ms: Math.round(addMs),
            add_cpu_ms: Math.round(addCpu),
            add_chunks_per_s: Math.round(n / (addMs / 1000)),
            add_chunks_per_cpu_s: Math.round(n / (addCpu / 1000)),
            add_max_event_loop_stall_ms: r2(loop.max / 1e6),
            heap_mb: r2(heapDelta / 1048576),
            heap_mb_per_100k: r2((heapDelta / 1048576) * (100_000 / n)),
            approx_bytes_mb: r2(idx.approxBytes / 1048576),
            vocabulary: loaded.vocabularySize,
            query_ms: lat,
            query_ms_filter_10pct: filtered,
            snapshot_mb: r2(buf.length / 1048576),
            serialize_ms: Math.round(serializeMs),
            serialize_cpu_ms: Math.round(serializeCpu),
            load_ms: Math.round(loadMs),
            load_cpu_ms: Math.round(loadCpu),
            loaded_answers_same: same,
            remove_24pct_ms: Math.round(removeMs),
            remove_6pct_with_compaction_ms: Math.round(removeCompactMs),
            compaction_cpu_ms: Math.round(compactCpu),
            query_ms_after_remove: afterRemove,
          },
          null,
          2,
        ),
      );
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
