/**
 * Search worker threads (src/kb/search-pool.ts): an index loaded from a snapshot in shared memory
 * is searched by real worker threads over the same bytes, and their answers are the index's own
 * (ids, order and scores to the float, filters and languages included); an index changed since
 * its load, a small one, a filter too wide or a pool turned off are searched by the caller; a
 * shutdown with searches in flight answers them on the calling thread.
 */
import t from 'tap';
import { CollectionLexicalIndex, type LexicalChunk, type LexicalHit } from '../../src/kb/lexical-index.ts';
import { FILTER_IDS_MAX, SearchPool } from '../../src/kb/search-pool.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { pollUntil } from '../poll.ts';

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = rng(7);
// A Zipf-like vocabulary: a few words in most chunks, most words in few.
const vocab = Array.from({ length: 3_000 }, (_, i) => `w${i.toString(36)}x`);
const word = () => vocab[Math.floor(vocab.length * rand() ** 3)];
const words = (n: number) => Array.from({ length: n }, word).join(' ');

const CHUNKS = 8_000;
const chunks: LexicalChunk[] = [];
for (let i = 0; i < CHUNKS; i++) {
  chunks.push({
    id: 10 * i + 3,
    text: words(8 + Math.floor(rand() * 40)),
    heading_path: rand() < 0.4 ? [words(2)] : [],
    language: rand() < 0.2 ? 'de' : 'en',
  });
}
const queries = Array.from({ length: 120 }, (_, i) => words(1 + (i % 6)));

const analyzer = () => new Analyzer({ languages: true });

/** The index as a restart loads it: its snapshot read into shared memory. */
function loadShared(): CollectionLexicalIndex {
  const built = new CollectionLexicalIndex(analyzer());
  built.add(chunks);
  const bytes = built.serialize();
  const shared = Buffer.from(new SharedArrayBuffer(bytes.length));
  bytes.copy(shared);
  return CollectionLexicalIndex.deserialize(shared, analyzer());
}

const same = (a: LexicalHit[], b: LexicalHit[]) => a.length === b.length && a.every((h, i) => h.id === b[i].id && Object.is(h.score, b[i].score));

/** Searches until the workers have the replica open (the first calls are answered by the caller). */
async function whenOpen(pool: SearchPool, index: CollectionLexicalIndex): Promise<void> {
  await pollUntil(async () => {
    const p = pool.search(index, queries[0], 10, undefined, null);
    if (p) await p;
    return p !== null;
  }, 'the replica open on a worker');
}

t.test('worker answers equal the index own, to the float', async (t) => {
  const index = loadShared();
  t.ok(index.sharedSnapshot, 'loaded from shared memory: shareable');
  const pool = new SearchPool({ size: 2, minChunks: 1 });
  t.teardown(() => pool.shutdown());
  await whenOpen(pool, index);

  let compared = 0;
  for (const [i, q] of queries.entries()) {
    const language = i % 3 === 0 ? 'de' : undefined;
    const p = pool.search(index, q, 10, language, null);
    t.ok(p, 'went to a worker');
    const got = await p!;
    const want = index.searchExhaustive(q, 10, undefined, language);
    if (!same(got, want)) t.fail(`query ${JSON.stringify(q)}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
    else compared++;
  }
  t.equal(compared, queries.length, 'every answer identical to exhaustive scoring');

  // Filters travel as the allowed ids.
  const allowed = new Set(chunks.filter(() => rand() < 0.3).map((c) => c.id));
  let filteredSame = 0;
  for (const q of queries.slice(0, 40)) {
    const got = await pool.search(index, q, 10, undefined, allowed)!;
    const want = index.searchExhaustive(q, 10, (id) => allowed.has(id));
    if (same(got, want) && got.every((h) => allowed.has(h.id))) filteredSame++;
  }
  t.equal(filteredSame, 40, 'filtered answers identical and inside the filter');

  // Many at once: both workers take them, each answer still the index's.
  const many = await Promise.all(queries.map((q) => pool.search(index, q, 5, undefined, null)!));
  t.ok(
    many.every((hits, i) => same(hits, index.search(queries[i], 5))),
    '120 concurrent searches answered identically',
  );
  t.ok(pool.stats().searched >= queries.length * 2 + 40, `counted (${pool.stats().searched})`);
  t.equal(pool.stats().workers, 2);
});

t.test('the caller searches what a worker must not', async (t) => {
  const index = loadShared();
  const pool = new SearchPool({ size: 2, minChunks: 1 });
  t.teardown(() => pool.shutdown());
  await whenOpen(pool, index);

  const wide = new Set<number>();
  for (let i = 0; i <= FILTER_IDS_MAX; i++) wide.add(i);
  t.equal(pool.search(index, queries[1], 10, undefined, wide), null, 'a filter wider than FILTER_IDS_MAX');
  t.equal(new SearchPool({ size: 2, minChunks: CHUNKS + 1 }).search(index, queries[1], 10, undefined, null), null, 'fewer chunks than minChunks');
  t.equal(new SearchPool({ size: 0, minChunks: 1 }).search(index, queries[1], 10, undefined, null), null, 'the pool off');

  const built = new CollectionLexicalIndex(analyzer());
  built.add(chunks.slice(0, 100));
  t.equal(built.sharedSnapshot, null, 'an index built in memory is not shared');
  t.equal(pool.search(built, queries[1], 10, undefined, null), null, 'not shared: searched by the caller');

  // A change after the load: the shared bytes no longer describe the index.
  t.equal(pool.stats().replicas, 1);
  index.remove([chunks[0].id]);
  t.equal(index.sharedSnapshot, null, 'changed: no longer shared');
  t.equal(pool.search(index, queries[1], 10, undefined, null), null, 'changed: searched by the caller');
  t.equal(pool.stats().replicas, 0, 'its replica closed');
});

t.test('a replica refuses changes', async (t) => {
  const built = new CollectionLexicalIndex(analyzer());
  built.add(chunks.slice(0, 50));
  const replica = CollectionLexicalIndex.openReplica(built.serialize(), analyzer());
  t.same(replica.search(queries[2], 10), built.search(queries[2], 10), 'answers as the index');
  t.throws(() => replica.add([chunks[60]]), /search replica/);
  t.throws(() => replica.remove([chunks[0].id]), /search replica/);
});

t.test('a shutdown with searches in flight answers them here', async (t) => {
  const index = loadShared();
  const pool = new SearchPool({ size: 2, minChunks: 1 });
  await whenOpen(pool, index);
  const inFlight = queries.slice(0, 30).map((q) => pool.search(index, q, 10, undefined, null)!);
  const stopped = pool.shutdown();
  const answers = await Promise.all(inFlight);
  await stopped;
  t.ok(
    answers.every((hits, i) => same(hits, index.search(queries[i], 10))),
    'all 30 answered, identically',
  );
  t.equal(pool.search(index, queries[0], 10, undefined, null), null, 'after the shutdown the caller searches');
});

t.test('an aborted search rejects with the abort reason', async (t) => {
  const index = loadShared();
  const pool = new SearchPool({ size: 1, minChunks: 1 });
  t.teardown(() => pool.shutdown());
  await whenOpen(pool, index);
  const ac = new AbortController();
  const p = pool.search(index, queries[3], 10, undefined, null, ac.signal)!;
  ac.abort(new Error('client gone'));
  await t.rejects(p, /client gone/);
  t.equal(pool.stats().pending, 0, 'nothing left pending');
});
