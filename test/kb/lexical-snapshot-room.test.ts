/**
 * Snapshots with room to grow (lexical format 2): an index loaded from one appends its next
 * chunks in place, inside the snapshot's buffer, instead of copying the posting lists they touch;
 * it answers exactly as an index that never went through a snapshot, a search-only replica opened
 * on the same bytes before the adds keeps answering as it did, and chunks past the room move a
 * term to an array of its own with the same answers. A snapshot written without room (format 1,
 * as documents' indexes are) still loads and grows by copying.
 */
import t from 'tap';
import { CollectionLexicalIndex } from '../../src/kb/lexical-index.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { generatedChunks, queriesFrom } from './index-lexical-fixtures.ts';

const analyzer = new Analyzer();
const base = generatedChunks(3_000, 21, 1);
const queries = queriesFrom(base, 60, 5);
const answers = (ix: CollectionLexicalIndex, k = 10) => queries.map((q) => [ix.searchExhaustive(q, k), ix.searchPruned(q, k)]);

/** The posting lists of `ix` that are views into `buffer` (white box: the index's own arrays). */
const viewsInto = (ix: CollectionLexicalIndex, buffer: ArrayBufferLike) => (ix as unknown as { post: Int32Array[] }).post.filter((p) => p.buffer === buffer).length;

/** `bytes` copied into shared memory, as a collection snapshot is read. */
const shared = (bytes: Buffer) => {
  const out = Buffer.from(new SharedArrayBuffer(bytes.length));
  bytes.copy(out);
  return out;
};

t.test('a loaded index appends in place; a replica on the same bytes answers as before', async (t) => {
  const built = new CollectionLexicalIndex(analyzer);
  built.add(base);
  const bytes = shared(built.serialize());
  t.equal(bytes.readUInt32LE(4), 2, 'written as format 2 (with room)');

  const replica = CollectionLexicalIndex.openReplica(bytes, analyzer);
  const loaded = CollectionLexicalIndex.deserialize(bytes, analyzer);
  const replicaBefore = answers(replica);
  t.strictSame(answers(loaded), answers(built), 'loaded: the same answers');
  const terms = viewsInto(loaded, bytes.buffer);
  t.ok(terms > 100, `every posting list a view into the snapshot (${terms})`);

  // 1.5% more chunks, ids above: the catch-up after a restart behind a few commits.
  const more = generatedChunks(45, 22, 100_000);
  loaded.add(more);
  built.add(more);
  t.strictSame(answers(loaded), answers(built), 'after the adds: the same ids, order and scores as the index never saved');
  t.ok(viewsInto(loaded, bytes.buffer) >= terms * 0.98, `the lists the adds touched grew in place (${viewsInto(loaded, bytes.buffer)} of ${terms} still views)`);
  t.strictSame(answers(replica), replicaBefore, 'the replica opened on the same bytes answers as before');

  // Past the room (a sixteenth of each list): those terms get arrays of their own.
  const many = generatedChunks(600, 23, 200_000);
  loaded.add(many);
  built.add(many);
  t.ok(viewsInto(loaded, bytes.buffer) < terms * 0.98, 'lists that outgrew their room were copied out');
  t.strictSame(answers(loaded), answers(built), 'and the answers are still the same');
  t.strictSame(answers(replica), replicaBefore, 'the replica still answers as before');

  // A removal and a compaction after in-place growth, then a snapshot of the result.
  loaded.remove([5, 6, 7, 100_003]);
  built.remove([5, 6, 7, 100_003]);
  loaded.compact();
  const again = CollectionLexicalIndex.deserialize(loaded.serialize(), analyzer);
  t.strictSame(answers(again), answers(built), 'compacted and saved again: the same answers');
});

t.test('a snapshot without room (format 1) loads and grows by copying', async (t) => {
  const built = new CollectionLexicalIndex(analyzer);
  built.add(base);
  const bytes = built.serialize(undefined, { growable: false });
  t.equal(bytes.readUInt32LE(4), 1, 'written as format 1');
  t.ok(bytes.length < built.serialize().length, 'smaller than with room');
  const loaded = CollectionLexicalIndex.deserialize(bytes, analyzer);
  t.strictSame(answers(loaded), answers(built), 'loaded: the same answers');
  const views = viewsInto(loaded, bytes.buffer);
  const more = generatedChunks(45, 22, 100_000);
  loaded.add(more);
  built.add(more);
  t.strictSame(answers(loaded), answers(built), 'after adds: the same answers');
  t.ok(viewsInto(loaded, bytes.buffer) < views * 0.9, `the lists the adds touched were copied out (no room): ${viewsInto(loaded, bytes.buffer)} of ${views} still views`);
});
