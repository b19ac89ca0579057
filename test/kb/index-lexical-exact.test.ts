import t, { type Test } from 'tap';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { Bm25Index } from '../retrieval/bm25-reference.ts';
import { lexicalDocOf } from '../../src/retrieval/search.ts';
import { CollectionLexicalIndex, type LexicalChunk } from '../../src/kb/lexical-index.ts';
import { generatedChunks, queriesFrom, readmeChunks, reference, rng } from './index-lexical-fixtures.ts';

const analyzer = new Analyzer();

/** Every query: same ids, same order, bit-identical scores as a fresh Bm25Index over `live`. */
function assertSameAsFresh(t: Test, idx: CollectionLexicalIndex, live: Map<number, LexicalChunk>, queries: string[], label: string) {
  const chunks = [...live.values()];
  t.equal(idx.size, chunks.length, `${label}: size`);
  let mismatches = 0;
  let nonEmpty = 0;
  const fresh = reference(chunks, analyzer);
  for (const q of queries) {
    for (const k of [10, 100000]) {
      const want = fresh(q, k);
      const got = idx.search(q, k);
      if (want.length > 0) nonEmpty++;
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        if (mismatches++ < 3) t.same(got.slice(0, 5), want.slice(0, 5), `${label}: query ${JSON.stringify(q)} k=${k}`);
      }
    }
  }
  t.equal(mismatches, 0, `${label}: ${queries.length} queries match a fresh Bm25Index exactly`);
  t.ok(nonEmpty > queries.length, `${label}: most queries have hits`);
}


t.test('adds, removes, re-adds and compaction keep scores equal to a fresh Bm25Index', async (t) => {
  const idx = new CollectionLexicalIndex(analyzer);
  const live = new Map<number, LexicalChunk>();
  const gen = generatedChunks(600, 7, 1, 3);
  const readme = readmeChunks(100000, 300);
  t.ok(readme.length >= 100, `README gives ${readme.length} chunks`);
  const all = [...gen, ...readme];
  const queries = queriesFrom(all, 60, 11);

  idx.add(gen.slice(0, 400));
  for (const c of gen.slice(0, 400)) live.set(c.id, c);
  await idx.addSliced(readme);
  for (const c of readme) live.set(c.id, c);
  assertSameAsFresh(t, idx, live, queries, 'after adds');

  // Remove a scattered 20% (below the compaction threshold: tombstones are in play).
  const r = rng(3);
  const victims = [...live.keys()].filter(() => r() < 0.2);
  t.equal(idx.remove(victims), victims.length);
  for (const id of victims) live.delete(id);
  t.equal(idx.remove([999999999]), 0, 'unknown ids are ignored');
  t.ok(idx.tombstones > 0, 'tombstones held before compaction');
  assertSameAsFresh(t, idx, live, queries, 'after removes');
  for (const id of victims) t.equal(idx.has(id), false);

  // Re-add half of the removed ones and the rest of the generated chunks.
  const back = victims.filter((_, i) => i % 2 === 0).map((id) => all.find((c) => c.id === id)!);
  idx.add([...back, ...gen.slice(400)]);
  for (const c of [...back, ...gen.slice(400)]) live.set(c.id, c);
  assertSameAsFresh(t, idx, live, queries, 'after re-adds');

  // A live id added again replaces its chunk.
  const replaced = { ...gen[1], text: 'completely different words kaloren vortas' };
  idx.add([replaced]);
  live.set(replaced.id, replaced);
  assertSameAsFresh(t, idx, live, [...queries, 'kaloren vortas'], 'after replacing a live id');

  // Remove past 25%: compaction runs.
  const many = [...live.keys()].filter(() => r() < 0.45);
  idx.remove(many);
  for (const id of many) live.delete(id);
  t.equal(idx.tombstones, 0, 'compacted once tombstones passed 25%');
  assertSameAsFresh(t, idx, live, queries, 'after compaction');

  // termIds equal Bm25Index.termIds of the same chunk.
  const sorted = [...live.values()].sort((a, b) => a.id - b.id);
  const fresh = Bm25Index.build(sorted.map(lexicalDocOf), analyzer);
  for (let i = 0; i < sorted.length; i += 7) t.same(Array.from(idx.termIds(sorted[i].id)), Array.from(fresh.termIds(i)), `termIds of ${sorted[i].id}`);
  t.equal(idx.termIds(-5).length, 0);

  // Removing everything leaves an empty, usable index.
  idx.remove([...live.keys()]);
  t.equal(idx.size, 0);
  t.same(idx.search('kaloren', 10), []);
  idx.add(gen.slice(0, 50));
  live.clear();
  for (const c of gen.slice(0, 50)) live.set(c.id, c);
  assertSameAsFresh(t, idx, live, queries.slice(0, 20), 'after emptying and refilling');
  t.ok(idx.approxBytes > 0);
});

t.test('ties break by id ascending; k cuts; empty and unknown queries return nothing', async (t) => {
  const idx = new CollectionLexicalIndex(analyzer);
  idx.add([
    { id: 30, text: 'same text', heading_path: [] },
    { id: 10, text: 'same text', heading_path: [] },
    { id: 20, text: 'same text', heading_path: [] },
  ]);
  t.same(idx.search('text', 2).map((h) => h.id), [10, 20]);
  t.same(idx.search('', 5), []);
  t.same(idx.search('the of', 5), []);
  t.same(idx.search('zeta', 5), []);
  t.same(idx.search('text', 0), []);
});

t.test('filter: top k among the chunks it admits, scores unchanged', async (t) => {
  const idx = new CollectionLexicalIndex(analyzer);
  const chunks = generatedChunks(300, 21);
  idx.add(chunks);
  const admit = (id: number) => id % 3 === 0;
  for (const q of queriesFrom(chunks, 30, 5)) {
    const all = idx.search(q, 100000);
    const want = all.filter((h) => admit(h.id)).slice(0, 7);
    t.same(idx.search(q, 7, admit), want, `filtered ${JSON.stringify(q)}`);
  }
  t.same(idx.search(chunks[0].text, 5, () => false), []);
});

t.test('deferred compaction: needsCompaction, then compactSliced; answers unchanged throughout', async (t) => {
  const idx = new CollectionLexicalIndex(analyzer);
  const chunks = generatedChunks(400, 31);
  idx.add(chunks);
  const gone = chunks.filter((c) => c.id % 2 === 0).map((c) => c.id);
  idx.remove(gone, { deferCompaction: true });
  t.ok(idx.needsCompaction, 'half removed: compaction due');
  t.equal(idx.tombstones, gone.length, 'not compacted yet');
  const live = new Map(chunks.filter((c) => c.id % 2 === 1).map((c) => [c.id, c]));
  const queries = queriesFrom([...live.values()], 30, 8);
  assertSameAsFresh(t, idx, live, queries, 'with tombstones');
  await idx.compactSliced();
  t.equal(idx.tombstones, 0);
  t.notOk(idx.needsCompaction);
  assertSameAsFresh(t, idx, live, queries, 'after compactSliced');
});
