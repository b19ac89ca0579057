/**
 * The pruned top-k search of the collection lexical index (MaxScore over block maxima,
 * src/kb/lexical-pruned.ts) against its exhaustive scorer: same ids, same order, same float scores
 * on generated Zipf collections (many k, filters, tombstones, adds that move the averages,
 * compaction, a snapshot round trip, long and duplicated queries, other BM25 parameters) and on
 * generated SciFact-like sentences.
 */
import t, { type Test } from 'tap';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { CollectionLexicalIndex, PRUNE_MAX_TERMS, type LexicalChunk } from '../../src/kb/lexical-index.ts';
import type { Bm25Params } from '../../src/retrieval/bm25.ts';
import { lcg, randomVocabulary, sciFactLike, zipfPicker } from '../../scripts/bench/kb-scale-corpus.ts';
import { MEMO_LENGTHS } from '../../src/kb/lexical-pruned.ts';

const analyzer = new Analyzer();
const KS = [1, 2, 3, 5, 10, 17, 50, 100, 1000, 1_000_000];

function zipfChunks(n: number, seed: number, firstId = 1): { chunks: LexicalChunk[]; vocab: string[]; pick: () => string } {
  const r = lcg(seed);
  const vocab = randomVocabulary(3000, seed + 1);
  const z = zipfPicker(vocab.length, 1.1, r);
  const pick = () => vocab[z()];
  const chunks: LexicalChunk[] = [];
  for (let i = 0; i < n; i++) {
    const len = 1 + Math.floor(r() * r() * 120);
    const body: string[] = [];
    for (let j = 0; j < len; j++) body.push(pick());
    const heading_path = r() < 0.5 ? [] : Array.from({ length: 1 + Math.floor(r() * 2) }, () => `${pick()} ${pick()}`);
    // Ids not in slot order (a replaced chunk keeps its id but gets a new slot): ties by id matter.
    chunks.push({ id: firstId + ((i * 7919) % n), text: body.join(' '), heading_path });
  }
  return { chunks, vocab, pick };
}

function zipfQueries(vocab: string[], pick: () => string, seed: number): string[] {
  const r = lcg(seed);
  const out = ['', 'unknownzzz', `${vocab[0]}`, `${vocab[0]} ${vocab[1]} ${vocab[2]}`];
  for (let i = 0; i < 50; i++) {
    const n = 1 + Math.floor(r() * 6);
    const words: string[] = [];
    for (let j = 0; j < n; j++) words.push(r() < 0.5 ? pick() : vocab[Math.floor(r() * vocab.length)]);
    out.push(words.join(' '));
  }
  // Duplicated terms (query tf > 1).
  for (let i = 0; i < 8; i++) {
    const w = pick();
    const v = vocab[Math.floor(r() * vocab.length)];
    out.push(`${w} ${v} ${w} ${v} ${v} ${pick()}`);
  }
  // Long queries: a pasted paragraph of hundreds of words.
  for (const n of [150, 400]) out.push(Array.from({ length: n }, () => (r() < 0.7 ? pick() : vocab[Math.floor(r() * vocab.length)])).join(' '));
  return out;
}

type Filter = ((id: number) => boolean) | undefined;
const FILTERS: Array<[string, Filter]> = [
  ['none', undefined],
  ['most', (id) => id % 7 !== 0],
  ['few', (id) => id % 97 === 3],
  ['nothing', () => false],
];

/**
 * Every query, k and filter: search and searchPruned equal searchExhaustive exactly. The
 * exhaustive ranking is taken once per query and filter at the largest k and cut for the smaller
 * ones: its order is total (score, then id), so its top k is the first k of any longer list, which
 * the first query checks against a call per k.
 */
function assertSame(t: Test, idx: CollectionLexicalIndex, queries: string[], label: string, ks = KS): void {
  let compared = 0;
  let mismatches = 0;
  let hits = 0;
  const kMax = Math.max(...ks);
  for (const [qi, q] of queries.entries()) {
    const full = new Map(FILTERS.map(([fname, filter]) => [fname, idx.searchExhaustive(q, kMax, filter)]));
    // A query of more than PRUNE_MAX_TERMS terms is answered by the exhaustive scorer in `search`;
    // the always-pruned path is still held to it, at a few k (each such call scores the
    // paragraph's candidates term by term, a tenth of a second).
    const long = new Set(analyzer.tokenize(q)).size > PRUNE_MAX_TERMS;
    for (const k of long ? ks.filter((x) => x === 1 || x === 10 || x === 100 || x === kMax) : ks) {
      for (const [fname, filter] of FILTERS) {
        const want = full.get(fname)!.slice(0, k);
        if (qi === 0 && JSON.stringify(idx.searchExhaustive(q, k, filter)) !== JSON.stringify(want)) {
          t.fail(`${label}: the exhaustive top ${k} is not the first ${k} of its top ${kMax} (filter ${fname})`);
        }
        hits += want.length;
        for (const [how, got] of [
          ['pruned', idx.searchPruned(q, k, filter)],
          ['search', idx.search(q, k, filter)],
        ] as const) {
          compared++;
          if (JSON.stringify(got) !== JSON.stringify(want)) {
            if (mismatches++ < 3) t.same(got.slice(0, 5), want.slice(0, 5), `${label}: ${how} ${JSON.stringify(q.slice(0, 60))} k=${k} filter=${fname}`);
          }
        }
      }
    }
  }
  t.equal(mismatches, 0, `${label}: ${compared} pruned answers equal the exhaustive ones`);
  t.ok(hits > 0, `${label}: the queries have hits`);
}

t.test('Zipf collection: adds, tombstones, drifting averages, replacement, compaction, snapshot', async (t) => {
  const { chunks, vocab, pick } = zipfChunks(6000, 11);
  const queries = zipfQueries(vocab, pick, 12);
  const idx = new CollectionLexicalIndex(analyzer);
  idx.add(chunks.slice(0, 4000));
  assertSame(t, idx, queries, 'built');

  // Tombstones: 15% removed, compaction deferred so dead postings stay in the lists and blocks.
  const r = lcg(5);
  const victims = chunks.slice(0, 4000).filter(() => r() < 0.15).map((c) => c.id);
  idx.remove(victims, { deferCompaction: true });
  t.ok(idx.tombstones > 0, 'tombstones held');
  assertSame(t, idx, queries, 'with tombstones', [1, 10, 100]);

  // Longer chunks appended: the averages move past the blocks' base (a rebase) and new blocks are added.
  const long = zipfChunks(2000, 21, 100_000).chunks.map((c) => ({ ...c, text: `${c.text} ${c.text} ${c.text}` }));
  idx.add(long);
  assertSame(t, idx, queries, 'after adds that move the averages', [1, 10, 100]);

  // Replacing live chunks (same id, new slot, new text) and re-adding removed ones.
  idx.add(chunks.slice(4000).concat(chunks.slice(0, 300).map((c) => ({ ...c, text: `${pick()} ${c.text}` }))));
  assertSame(t, idx, queries, 'after replacements', [1, 10, 100]);

  idx.compact();
  t.equal(idx.tombstones, 0, 'compacted');
  assertSame(t, idx, queries, 'after compaction', [1, 10, 100]);

  const loaded = CollectionLexicalIndex.deserialize(idx.serialize(), analyzer);
  assertSame(t, loaded, queries, 'loaded from a snapshot', [1, 10, 100]);
  t.same(loaded.search(queries[10], 10), idx.search(queries[10], 10), 'the snapshot answers as the index did');
});

t.test('other BM25 parameters: title weight 0, b 0, large k1', async (t) => {
  const { chunks, vocab, pick } = zipfChunks(3000, 31);
  const queries = zipfQueries(vocab, pick, 32).slice(0, 30);
  const variants: Array<Partial<Bm25Params>> = [{ titleWeight: 0 }, { b: 0, bTitle: 0 }, { k1: 3, b: 0.9, bTitle: 0.99, titleWeight: 5 }, { k1: 0.2 }];
  for (const params of variants) {
    const idx = new CollectionLexicalIndex(analyzer, params);
    idx.add(chunks);
    assertSame(t, idx, queries, JSON.stringify(params), [1, 10, 100]);
  }
  // b = 1 leaves a zero norm for an empty field possible: no bound, the exhaustive scorer answers.
  const idx = new CollectionLexicalIndex(analyzer, { b: 1 });
  idx.add(chunks);
  assertSame(t, idx, queries.slice(0, 10), 'b=1 (falls back)', [10]);
});

t.test('SciFact-like sentences: claims, pasted paragraphs, filters', async (t) => {
  const gen = sciFactLike(41);
  const chunks: LexicalChunk[] = Array.from({ length: 12_000 }, (_, i) => ({ id: i + 1, text: gen.next(), heading_path: i % 3 === 0 ? [gen.query()] : [] }));
  const idx = new CollectionLexicalIndex(analyzer);
  await idx.addSliced(chunks);
  const queries = Array.from({ length: 60 }, () => gen.query());
  queries.push(Array.from({ length: 25 }, () => gen.query()).join(' '), `${queries[0]} ${queries[0]} ${queries[0]}`);
  assertSame(t, idx, queries, 'SciFact-like', [1, 3, 10, 20, 60, 500]);
});

t.test('skips: warm-up give-ups, 8-bit inverse norms at their limits, titles, adds after the blocks', async (t) => {
  // A rare "lead" term in ~900 chunks (a warm-up list: at most 1024 postings) among common ones:
  // once the top k is full most of its chunks are given up on mid-way, and those must never come
  // back. Duplicated texts tie exactly (the tie breaks by id, and a give-up needs a bound
  // strictly below theta).
  // Some chunks are far longer than the others (inverse norm below the 8-bit steps' range, so
  // clamped to the lowest step) or empty in the body (the highest step), and some carry query
  // terms in their titles (the exact title operand beside the bounded body one).
  const r = lcg(71);
  const vocab = randomVocabulary(400, 72);
  const z = zipfPicker(vocab.length, 1.05, r);
  const make = (n: number, firstId: number): LexicalChunk[] => {
    const out: LexicalChunk[] = [];
    for (let i = 0; i < n; i++) {
      const words: string[] = [];
      const kind = r();
      const len = kind < 0.02 ? 600 + Math.floor(r() * 400) : kind < 0.04 ? 0 : 3 + Math.floor(r() * 25);
      for (let j = 0; j < len; j++) words.push(vocab[z()]);
      if (r() < 0.03) words.push('leadword');
      if (r() < 0.01) words.push('rareword', 'rareword');
      const heading_path = r() < 0.3 ? [`${vocab[z()]} ${r() < 0.05 ? 'leadword' : vocab[z()]}`] : [];
      out.push({ id: firstId + i, text: words.join(' '), heading_path });
    }
    // Exact duplicates (ties) under other ids.
    for (let i = 0; i < n / 50; i++) out.push({ ...out[Math.floor(r() * n)], id: firstId + n + i });
    return out;
  };
  const queries = [
    `leadword ${vocab[0]} ${vocab[1]}`,
    `leadword rareword ${vocab[2]} ${vocab[5]} ${vocab[9]}`,
    `rareword ${vocab[0]}`,
    `leadword ${vocab[3]} ${vocab[3]} ${vocab[40]} ${vocab[80]} ${vocab[120]}`,
    `${vocab[0]} ${vocab[1]} ${vocab[2]} leadword`,
    ...Array.from({ length: 20 }, () => `leadword ${vocab[z()]} ${vocab[z()]} ${vocab[Math.floor(r() * vocab.length)]}`),
  ];
  for (const params of [{}, { b: 0, bTitle: 0 }, { b: 0.99, bTitle: 0.5, titleWeight: 3 }, { k1: 0, titleWeight: 0 }] as Array<Partial<Bm25Params>>) {
    const label = JSON.stringify(params);
    const idx = new CollectionLexicalIndex(analyzer, params);
    const first = make(18_000, 1);
    idx.add(first);
    assertSame(t, idx, queries, `${label} built`, [1, 2, 10, 100]);
    // Adds too small to move the averages past the base: the blocks and the per-slot inverse
    // norms built by the queries above are extended to the new slots, not rebuilt.
    idx.add(make(300, 50_000));
    assertSame(t, idx, queries, `${label} after small adds`, [1, 10]);
    // Tombstones among the warm-up list's chunks and the duplicates, left in the lists.
    const victims = first.filter((c) => c.text.includes('leadword') && r() < 0.4).map((c) => c.id);
    idx.remove(victims, { deferCompaction: true });
    assertSame(t, idx, queries, `${label} with tombstones`, [1, 10, 100]);
  }
});

t.test('inverse norms per slot: computed per length or, past MEMO_LENGTHS tokens, one slot at a time, the same answers', async (t) => {
  const r = lcg(91);
  const vocab = randomVocabulary(300, 92);
  const z = zipfPicker(vocab.length, 1.05, r);
  const chunk = (id: number, len: number): LexicalChunk => ({ id, text: Array.from({ length: len }, () => vocab[z()]).join(' '), heading_path: [] });
  const idx = new CollectionLexicalIndex(analyzer);
  // One chunk longer than MEMO_LENGTHS: the first range of slots is computed one by one.
  const first = Array.from({ length: 4_000 }, (_, i) => chunk(i + 1, 2 + Math.floor(r() * 30)));
  first.push(chunk(5_000, MEMO_LENGTHS + 10));
  idx.add(first);
  const queries = Array.from({ length: 25 }, () => `${vocab[z()]} ${vocab[z()]} ${vocab[Math.floor(r() * vocab.length)]}`);
  assertSame(t, idx, queries, 'with a chunk past the per-length table', [1, 10, 100]);
  // Later slots, all short: their range comes from the per-length table.
  idx.add(Array.from({ length: 3_000 }, (_, i) => chunk(10_000 + i, 2 + Math.floor(r() * 30))));
  assertSame(t, idx, queries, 'after adds of short chunks', [1, 10, 100]);
});
