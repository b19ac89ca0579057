/**
 * Finding chunks by id in a collection lexical index, whether ids come ascending (looked up by a
 * binary search over the slots) or out of order (through a map): has, termIds, ids and removal
 * agree at every step with a plain record of what was added and removed, through replacements,
 * compaction and a snapshot round trip, and the index answers searches the same either way.
 */
import t, { type Test } from 'tap';
import { CollectionLexicalIndex, type LexicalChunk } from '../../src/kb/lexical-index.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';

const analyzer = new Analyzer();
const chunk = (id: number, salt = 0): LexicalChunk => ({
  id,
  text: `ledger ${id % 17} crane ${(id + salt) % 5} harbour${id % 3} note${id}${salt ? ` revised${salt}` : ''}`,
  heading_path: id % 4 === 0 ? [`Part ${id % 9}`] : [],
});

/** Checks the index against `live` (id -> text salt) for every id up to `maxId`, and its ids(). */
function agrees(t: Test, ix: CollectionLexicalIndex, live: Map<number, number>, maxId: number, label: string) {
  let wrong = 0;
  for (let id = -2; id <= maxId + 2; id++) {
    if (ix.has(id) !== live.has(id)) wrong++;
    if ((ix.termIds(id).length > 0) !== live.has(id)) wrong++;
  }
  t.equal(wrong, 0, `${label}: has and termIds agree for every id`);
  t.strictSame(ix.ids(), [...live.keys()].sort((a, b) => a - b), `${label}: ids() are the live ones, ascending`);
  t.equal(ix.size, live.size, `${label}: size`);
}

/** The same chunks added in one order to one index and ascending to another score the same. */
function sameSearches(t: Test, a: CollectionLexicalIndex, b: CollectionLexicalIndex, label: string) {
  const queries = ['ledger 3 crane', 'harbour1 note12', 'revised7 crane 2', 'part 4 ledger 9'];
  t.strictSame(
    queries.map((q) => a.searchExhaustive(q, 8)),
    queries.map((q) => b.searchExhaustive(q, 8)),
    `${label}: the same hits and scores`,
  );
}

t.test('ids ascending: found without a map, through removal, compaction and a snapshot', async (t) => {
  const ix = new CollectionLexicalIndex(analyzer);
  const live = new Map<number, number>();
  for (let id = 1; id <= 400; id += 3) {
    ix.add([chunk(id)]);
    live.set(id, 0);
  }
  agrees(t, ix, live, 400, 'added ascending');
  const gone = [...live.keys()].filter((id) => id % 2 === 0);
  ix.remove(gone, { deferCompaction: true });
  for (const id of gone) live.delete(id);
  agrees(t, ix, live, 400, 'after removals (tombstones held)');
  ix.add([chunk(1000), chunk(1001)]);
  live.set(1000, 0).set(1001, 0);
  agrees(t, ix, live, 1001, 'more added above');
  ix.compact();
  agrees(t, ix, live, 1001, 'after compaction');
  const back = CollectionLexicalIndex.deserialize(ix.serialize(), analyzer);
  agrees(t, back, live, 1001, 'loaded from its snapshot');
  back.add([chunk(1005)]);
  live.set(1005, 0);
  agrees(t, back, live, 1005, 'added to after the load');
});

t.test('ids out of order and replaced: through the map, the same answers', async (t) => {
  const ix = new CollectionLexicalIndex(analyzer);
  const ref = new CollectionLexicalIndex(analyzer);
  const live = new Map<number, number>();
  const order = [50, 10, 70, 30, 90, 20, 60, 80, 40, 100, 5, 95];
  for (const id of order) {
    ix.add([chunk(id)]);
    live.set(id, 0);
  }
  for (const id of [...order].sort((a, b) => a - b)) ref.add([chunk(id)]);
  agrees(t, ix, live, 100, 'added out of order');
  sameSearches(t, ix, ref, 'out of order vs ascending');

  // A replacement (the same id again, new text) and removals.
  ix.add([chunk(30, 7)]);
  live.set(30, 7);
  ix.remove([10, 90]);
  for (const id of [10, 90]) live.delete(id);
  agrees(t, ix, live, 100, 'after a replacement and removals');
  t.ok(ix.termIds(30).length > ref.termIds(30).length, 'the replaced chunk has its new terms');

  ix.compact();
  agrees(t, ix, live, 100, 'after compaction');
  const back = CollectionLexicalIndex.deserialize(ix.serialize(), analyzer);
  agrees(t, back, live, 100, 'loaded from its snapshot');
  back.add([chunk(3), chunk(200)]);
  live.set(3, 0).set(200, 0);
  agrees(t, back, live, 200, 'added to after the load, below and above');

  // An index with ascending ids that turns out of order keeps what it held.
  const turning = new CollectionLexicalIndex(analyzer);
  const turned = new Map<number, number>();
  for (const id of [2, 4, 6, 8]) {
    turning.add([chunk(id)]);
    turned.set(id, 0);
  }
  turning.remove([4]);
  turned.delete(4);
  turning.add([chunk(5)]);
  turned.set(5, 0);
  agrees(t, turning, turned, 8, 'ascending, then one below the highest');
  turning.add([chunk(4, 3)]);
  turned.set(4, 3);
  agrees(t, turning, turned, 8, 'and a removed id added again');
});
