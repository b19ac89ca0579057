import t from 'tap';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { CollectionLexicalIndex } from '../../src/kb/lexical-index.ts';
import { generatedChunks, queriesFrom, readmeChunks } from './index-lexical-fixtures.ts';

const analyzer = new Analyzer();

function build() {
  const idx = new CollectionLexicalIndex(analyzer);
  const chunks = [...generatedChunks(500, 4, 1, 2), ...readmeChunks(50000, 200)];
  idx.add(chunks);
  idx.remove(chunks.filter((c) => c.id % 10 === 1).map((c) => c.id)); // tombstones, below the compaction share
  return { idx, chunks };
}

t.test('serialize round trip: same size, ids, scores, termIds; the copy stays mutable', async (t) => {
  const { idx, chunks } = build();
  const queries = queriesFrom(chunks, 80, 9);
  const before = queries.map((q) => idx.search(q, 50));
  const buf = idx.serialize();
  const sizeAtSave = idx.size;
  // The loaded index appends into the room its buffer leaves (format 2): a copy of the bytes, kept for the loads below.
  const copy = CollectionLexicalIndex.deserialize(Buffer.from(buf), new Analyzer());
  t.equal(copy.size, idx.size);
  t.same(copy.ids(), idx.ids());
  t.same(copy.params, idx.params);
  t.same(queries.map((q) => copy.search(q, 50)), before, 'every query answers the same');
  for (const id of copy.ids().slice(0, 40)) t.same(Array.from(copy.termIds(id)), Array.from(idx.termIds(id)));
  // Both evolve the same way after the load.
  const more = generatedChunks(100, 99, 900000);
  copy.add(more);
  idx.add(more);
  copy.remove([3, 5, 7]);
  idx.remove([3, 5, 7]);
  t.same(queries.map((q) => copy.search(q, 20)), queries.map((q) => idx.search(q, 20)), 'same after further changes');
  // A buffer at an odd offset (a slice of a bigger one) loads too.
  const padded = Buffer.alloc(buf.length + 3);
  buf.copy(padded, 3);
  const odd = CollectionLexicalIndex.deserialize(padded.subarray(3), analyzer);
  t.equal(odd.size, sizeAtSave);
  t.same(odd.search(queries[10], 10), before[10].slice(0, 10));
  // The sliced forms give the same bytes and the same index.
  const sliced = await idx.serializeSliced();
  t.ok(sliced.equals(idx.serialize()), 'serializeSliced writes what serialize writes');
  const slicedCopy = await CollectionLexicalIndex.deserializeSliced(sliced, analyzer);
  t.same(queries.slice(0, 20).map((q) => slicedCopy.search(q, 20)), queries.slice(0, 20).map((q) => idx.search(q, 20)));
  // An empty index round-trips.
  t.equal(CollectionLexicalIndex.deserialize(new CollectionLexicalIndex(analyzer).serialize(), analyzer).size, 0);
});

t.test('corrupt, truncated, foreign or other-analyzer snapshots are rejected with a reason', async (t) => {
  const { idx } = build();
  const buf = idx.serialize();
  const flipped = Buffer.from(buf);
  flipped[Math.floor(buf.length / 2)] ^= 0xff;
  t.throws(() => CollectionLexicalIndex.deserialize(flipped, analyzer), { code: 'INTERNAL_ERROR', message: /checksum/ });
  t.throws(() => CollectionLexicalIndex.deserialize(buf.subarray(0, buf.length - 100), analyzer), { message: /checksum|truncated/ });
  t.throws(() => CollectionLexicalIndex.deserialize(Buffer.from('hello world, not an index at all, really not'), analyzer), { message: /not a lexical index/ });
  t.throws(() => CollectionLexicalIndex.deserialize(Buffer.alloc(4), analyzer), { message: /too short/ });
  const future = Buffer.from(buf);
  future.writeUInt32LE(99, 4);
  t.throws(() => CollectionLexicalIndex.deserialize(future, analyzer), { message: /format 99/ });
  t.throws(() => CollectionLexicalIndex.deserialize(buf, new Analyzer({ stem: false })), { message: /analyzer/ });
});
