/**
 * Top-10 lexical search at 100k and 1M chunks: the collection lexical index's pruned search
 * (MaxScore over block maxima, src/kb/lexical-pruned.ts) beside its exhaustive scorer and SQLite
 * FTS5 ('porter unicode61', bm25(), any query word but stop words) over the very same chunk texts, the three run
 * round-robin query by query so they see the same machine state. Checks that the pruned answers
 * equal the exhaustive ones (ids, order, float scores) on every query, and reports how latency
 * grows from the smallest size to the largest.
 *
 * The index is built in process (CollectionLexicalIndex.add), not through the REST API, to keep a
 * 1M-chunk run to minutes: the times are of the search itself, without HTTP or the search
 * pipeline around it. Chunks: 1-3 SciFact abstract sentences each (random picks, so 1M chunks
 * are not 1M copies of 5k abstracts) when ../shared/eval/scifact is there, generated SciFact-like
 * sentences otherwise; queries: SciFact's train claims, or generated claims.
 *
 *   npm run bench:kb-scale                    (100k and 1M chunks)
 *   npm run bench:kb-scale -- 100000          (sizes as arguments; BENCH_QUICK=1: 100k only)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { CollectionLexicalIndex, type LexicalChunk } from '../../src/kb/lexical-index.ts';
import { loadLexical, readManifest, SnapshotWriter } from '../../src/kb/index-snapshot.ts';
import { SearchPool } from '../../src/kb/search-pool.ts';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { stopWordSet } from '../../src/retrieval/stop-words.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { log, QUICK, quantile, round, runStandalone, SectionBuilder } from './harness.ts';
import { scifactSource } from './scifact-chunks.ts';

const argSizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n > 0);
const SIZES = argSizes.length > 0 ? argSizes : QUICK ? [100_000] : [100_000, 1_000_000];
const K = 10;
const QUERIES = 200;


const STOPS = stopWordSet('extended') ?? new Set<string>();

/**
 * FTS5's query for a claim: any of its words (FTS5's default AND finds almost nothing for a
 * claim), less the stop words our analyzer drops too (else FTS5 walks "the" and "of" and loses
 * by a wide margin for that alone).
 */
function ftsMatch(q: string): string {
  const words = [...new Set(q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].filter((w) => !STOPS.has(w));
  return words.map((w) => `"${w}"`).join(' OR ');
}

const pct = (xs: number[], p: number) => round(quantile([...xs].sort((a, b) => a - b), p));

const CLIENTS = 8;
const WORKERS = Math.min(4, os.availableParallelism());

/**
 * CLIENTS clients searching at once, each over every query in turn: on the main thread (each
 * search holds the event loop) and through the search worker threads (src/kb/search-pool.ts). The
 * event-loop delay is what a /health call would wait meanwhile.
 */
async function concurrent(n: number, index: CollectionLexicalIndex, queries: string[], table: { rows: unknown[][] }, b: SectionBuilder): Promise<void> {
  const pool = new SearchPool({ size: WORKERS, minChunks: 1 });
  try {
    // Open the replica on every worker, then a warm-up pass (each worker builds its block maxima).
    for (;;) {
      const p = pool.search(index, queries[0], K, undefined, null);
      if (p && pool.stats().workers === WORKERS) {
        await p;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await Promise.all(Array.from({ length: WORKERS * 2 }, async () => {
      for (const q of queries) await pool.search(index, q, K, undefined, null);
    }));
    for (const q of queries) index.search(q, K);
    const want = queries.map((q) => JSON.stringify(index.search(q, K)));
    for (const where of ['main thread', `${WORKERS} worker threads`]) {
      const onMain = where === 'main thread';
      const lat: number[] = [];
      let same = 0;
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          for (let i = 0; i < queries.length; i++) {
            const qi = (i + c * 25) % queries.length;
            const s = performance.now();
            // A turn per search on the main thread too, as the server's search gate gives one.
            const hits = onMain ? (await new Promise((r) => setImmediate(r)), index.search(queries[qi], K)) : await pool.search(index, queries[qi], K, undefined, null)!;
            lat.push(performance.now() - s);
            if (JSON.stringify(hits) === want[qi]) same++;
          }
        }),
      );
      const secs = (performance.now() - t0) / 1000;
      delay.disable();
      table.rows.push([n, where, lat.length, round(lat.length / secs, 0), pct(lat, 0.5), pct(lat, 0.95), round(delay.max / 1e6, 1), `${same}/${lat.length}`]);
      log(`${n}: ${where}, ${CLIENTS} clients: ${round(lat.length / secs, 0)} q/s`);
      if (!onMain) {
        b.check(`${CLIENTS} clients at ${n} chunks: worker answers identical`, same === lat.length, `${same} of ${lat.length}`);
        if (n >= 1_000_000) b.check(`${CLIENTS} clients at ${n} chunks: >= 150 q/s`, lat.length / secs >= 150, `${round(lat.length / secs, 0)} q/s (issue 23's goal)`);
      }
    }
  } finally {
    await pool.shutdown();
  }
}

await runStandalone(async () => {
  const src = scifactSource(QUERIES);
  const b = new SectionBuilder('kb-scale', 'Lexical search at 100k and 1M chunks', { sizes: SIZES, k: K, queries: src.queries.length, source: src.kind });
  b.note('Built in process (CollectionLexicalIndex.add and an FTS5 table in a temporary SQLite file), not through the REST API: latencies are of the search call itself, no HTTP or pipeline around it.');
  b.note('The three run round-robin per query (pruned, exhaustive, FTS5) after a warm-up pass; the machine is shared (2 cores, other jobs running), so read the ratios, which come from the same runs.');
  b.note(`Chunks: ${src.kind}.`);
  const lat = b.table('Top-10 latency (ms, in process)', ['chunks', 'pruned p50', 'pruned p95', 'exhaustive p50', 'exhaustive p95', 'FTS5 p50', 'FTS5 p95', 'exhaustive / pruned (p50)', 'FTS5 / pruned (p50)', 'identical']);
  const build = b.table('Build', ['chunks', 'index add s', 'index heap MB (approx)', 'FTS5 insert s', 'terms']);
  const conc = b.table(
    `${CLIENTS} concurrent clients (in process, each looping over the queries; the index loaded from its snapshot into shared memory)`,
    ['chunks', 'where', 'searches', 'q/s', 'p50 ms', 'p95 ms', 'event-loop delay max ms', 'identical'],
  );
  const snap = b.table('Snapshot load (a restart: lexical.bin read, verified against the manifest and opened; median of 3, ms)', ['chunks', 'lexical.bin MB', 'load ms', 'first search after it ms']);
  // Pasted paragraphs: 20 queries of 10 claims each (60-80 distinct terms), past PRUNE_MAX_TERMS:
  // with that many terms a bound rules out few chunks, and `search` makes one pass over the postings.
  const paragraphs = Array.from({ length: 20 }, (_, i) => src.queries.slice((i * 10) % src.queries.length, ((i * 10) % src.queries.length) + 10).join(' '));
  // Where pruning stops paying (PRUNE_MAX_TERMS): queries of 1 to 10 claims joined, always pruned vs exhaustive.
  const CLAIMS = [1, 2, 3, 5, 10];
  const crossover = b.table('Query length: always pruned vs exhaustive (20 queries per length, top 10, p50 ms)', ['chunks', 'claims', 'distinct terms (median)', 'always pruned', 'exhaustive', 'pruned / exhaustive']);
  const long = b.table('Pasted paragraphs (20 queries of 10 claims, top 10, ms)', ['chunks', 'search p50', 'search p95', 'always pruned p50', 'exhaustive p50', 'search / exhaustive (p50)', 'identical']);
  const analyzer = new Analyzer();
  const p50s: Array<{ n: number; pruned: number; exhaustive: number; fts: number }> = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-kb-scale-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

  for (const n of SIZES) {
    log(`building ${n} chunks`);
    const idx = new CollectionLexicalIndex(analyzer);
    const db = new Database(path.join(dir, `fts-${n}.db`));
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec(`CREATE VIRTUAL TABLE d USING fts5(text, tokenize = 'porter unicode61')`);
    const ins = db.prepare('INSERT INTO d (rowid, text) VALUES (?, ?)');
    let addMs = 0;
    let ftsMs = 0;
    const BATCH = 10_000;
    for (let at = 0; at < n; at += BATCH) {
      const batch: LexicalChunk[] = [];
      for (let i = at; i < Math.min(n, at + BATCH); i++) batch.push({ id: i + 1, text: src.chunk(), heading_path: [] });
      let t0 = performance.now();
      idx.add(batch);
      addMs += performance.now() - t0;
      t0 = performance.now();
      db.transaction(() => {
        for (const c of batch) ins.run(c.id, c.text);
      })();
      ftsMs += performance.now() - t0;
    }
    build.rows.push([n, round(addMs / 1000, 1), round(idx.approxBytes / 1024 / 1024), round(ftsMs / 1000, 1), idx.vocabularySize]);
    {
      // The snapshot a restart reads (src/kb/index-snapshot.ts), loaded as the server loads it.
      const snapDir = path.join(dir, `snap-${n}`);
      const w = await SnapshotWriter.begin(snapDir, { durable: false });
      await w.writeLexical(idx);
      await w.commit({ kind: 'collection', database_id: null, collection_id: 1, version: 1, key: null, content_sha256: null, chunker_version: null, language: null, analyzer: analyzer.signature, embedder: null, dimension: null, hnsw: null, chunks: idx.size });
      const read = await readManifest(snapDir);
      if (!read.ok) throw new Error(`snapshot unreadable: ${read.reason}`);
      const loads: number[] = [];
      const firsts: number[] = [];
      for (let r = 0; r < 3; r++) {
        const t0 = performance.now();
        const loaded = await loadLexical(snapDir, read.manifest, analyzer);
        loads.push(performance.now() - t0);
        const t1 = performance.now();
        loaded.search(src.queries[r]!, K);
        firsts.push(performance.now() - t1);
      }
      await concurrent(n, await loadLexical(snapDir, read.manifest, analyzer), src.queries, conc, b);
      const mb = fs.statSync(path.join(snapDir, 'lexical.bin')).size / 1024 / 1024;
      const med = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);
      snap.rows.push([n, round(mb), round(med(loads), 0), round(med(firsts), 1)]);
      log(`${n}: snapshot ${round(mb)} MB loads in ${round(med(loads), 0)} ms`);
      fs.rmSync(snapDir, { recursive: true, force: true });
    }
    const sel = db.prepare('SELECT rowid AS r FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 10');

    // Warm-up (and the block maxima of every query term built once, as a searched index has them).
    let identical = 0;
    let differing = 0;
    for (const q of src.queries) {
      const pruned = idx.search(q, K);
      const full = idx.searchExhaustive(q, K);
      if (JSON.stringify(pruned) === JSON.stringify(full)) identical++;
      else differing++;
      sel.all(ftsMatch(q));
    }
    const t: Record<'pruned' | 'exhaustive' | 'fts', number[]> = { pruned: [], exhaustive: [], fts: [] };
    for (const q of src.queries) {
      const m = ftsMatch(q);
      let t0 = performance.now();
      idx.search(q, K);
      t.pruned.push(performance.now() - t0);
      t0 = performance.now();
      idx.searchExhaustive(q, K);
      t.exhaustive.push(performance.now() - t0);
      t0 = performance.now();
      if (m) sel.all(m);
      t.fts.push(performance.now() - t0);
    }
    db.close();
    const tl: Record<'search' | 'pruned' | 'exhaustive', number[]> = { search: [], pruned: [], exhaustive: [] };
    let longSame = 0;
    for (const q of paragraphs) idx.searchPruned(q, K); // the block maxima of their terms, built once
    for (const q of paragraphs) {
      let t0 = performance.now();
      const got = idx.search(q, K);
      tl.search.push(performance.now() - t0);
      t0 = performance.now();
      const pruned = idx.searchPruned(q, K);
      tl.pruned.push(performance.now() - t0);
      t0 = performance.now();
      const full = idx.searchExhaustive(q, K);
      tl.exhaustive.push(performance.now() - t0);
      if (JSON.stringify(got) === JSON.stringify(full) && JSON.stringify(pruned) === JSON.stringify(full)) longSame++;
    }
    for (const claims of CLAIMS) {
      const qs = Array.from({ length: 20 }, (_, i) => src.queries.slice((i * claims) % src.queries.length, ((i * claims) % src.queries.length) + claims).join(' '));
      for (const q of qs) idx.searchPruned(q, K);
      const tp: number[] = [];
      const te: number[] = [];
      const terms: number[] = [];
      for (const q of qs) {
        terms.push(new Set(analyzer.tokenize(q)).size);
        let t0 = performance.now();
        idx.searchPruned(q, K);
        tp.push(performance.now() - t0);
        t0 = performance.now();
        idx.searchExhaustive(q, K);
        te.push(performance.now() - t0);
      }
      crossover.rows.push([n, claims, pct(terms, 0.5), pct(tp, 0.5), pct(te, 0.5), round(pct(tp, 0.5) / pct(te, 0.5))]);
    }
    const ls = pct(tl.search, 0.5);
    const le = pct(tl.exhaustive, 0.5);
    long.rows.push([n, ls, pct(tl.search, 0.95), pct(tl.pruned, 0.5), le, round(ls / le), `${longSame}/${paragraphs.length}`]);
    b.check(`pasted paragraphs at ${n} chunks: search within 1.25x of one pass over the postings`, ls <= le * 1.25 + 0.5, `${round(ls / le)}x; always pruned ${pct(tl.pruned, 0.5)} ms`);
    b.check(`pasted paragraphs at ${n} chunks: identical answers`, longSame === paragraphs.length, `${longSame} of ${paragraphs.length}`);
    const row = { n, pruned: pct(t.pruned, 0.5), exhaustive: pct(t.exhaustive, 0.5), fts: pct(t.fts, 0.5) };
    p50s.push(row);
    lat.rows.push([n, row.pruned, pct(t.pruned, 0.95), row.exhaustive, pct(t.exhaustive, 0.95), row.fts, pct(t.fts, 0.95), round(row.exhaustive / row.pruned), round(row.fts / row.pruned), `${identical}/${identical + differing}`]);
    b.check(`pruned = exhaustive at ${n} chunks`, differing === 0, `${identical} of ${identical + differing} top-${K} answers identical (ids, order, float scores)`);
    b.section.data[`ms_${n}`] = t;
    log(`${n}: pruned p50 ${row.pruned} ms, exhaustive ${row.exhaustive} ms, FTS5 ${row.fts} ms`);
  }

  if (p50s.length > 1) {
    const first = p50s[0];
    const last = p50s[p50s.length - 1];
    const g = b.table(`Growth of p50 from ${first.n} to ${last.n} chunks (x${round(last.n / first.n)} the chunks)`, ['search', 'growth']);
    g.rows.push(['pruned', round(last.pruned / first.pruned)], ['exhaustive', round(last.exhaustive / first.exhaustive)], ['FTS5', round(last.fts / first.fts)]);
    b.check('the index search alone (in process, no server around it) p50 grows x3 or less', last.pruned / first.pruned <= 3, `x${round(last.pruned / first.pruned)} (stricter than issue 23's in-server goal, which bench kb-serve checks)`);
  }
  return b.finish();
});
