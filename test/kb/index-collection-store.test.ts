/**
 * The collection indexes over the real SQLite store: rebuilt from its chunks and vectors, kept in
 * step by its commits (replaceDocument, deleteDocument), loaded from their snapshot on reopen when
 * the collection's version is unchanged, and scoring exactly as a fresh Bm25Index over the chunks
 * the store holds.
 */
import t from 'tap';
import path from 'node:path';
import { KbStore } from '../../src/kb/kb-store.ts';
import { CollectionIndexes } from '../../src/kb/collection-index.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { makeVectors, versionOf, tempDir } from './fixtures/store-data.ts';
import { newChunks, queriesFrom, reference } from './index-lexical-fixtures.ts';

const DIM = 8;

t.test('rebuild from the store, commits applied, snapshot reloaded, scores equal a fresh Bm25Index', async (t) => {
  const root = tempDir(t, 'kb-ix-store-');
  const store = new KbStore(path.join(root, 'kb'));
  t.teardown(() => store.close());
  const dir = path.join(root, 'kb', 'indexes', '1');
  const c = store.createCollection('docs', null);
  store.setCollectionEmbedder(c.id, 'test-embedder', DIM);
  const docA = store.ensureDocument(c.id, { source: 'https://h/a', source_kind: 'url', source_key: 'https://h/a', filename: null });
  const docB = store.ensureDocument(c.id, { source: 'https://h/b', source_kind: 'url', source_key: 'https://h/b', filename: null });
  store.replaceDocument(c.id, docA.id, versionOf('https://h/a', 'a'.repeat(64)), newChunks(120, 1), makeVectors(120, DIM, 1));
  store.replaceDocument(c.id, docB.id, versionOf('https://h/b', 'b'.repeat(64)), newChunks(80, 2), makeVectors(80, DIM, 2));

  const analyzer = new Analyzer();
  const live = () => [...store.iterateChunks(c.id)];
  const check = (ix: CollectionIndexes, label: string) => {
    const chunks = live();
    t.equal(ix.lexical.size, chunks.length, `${label}: every stored chunk indexed`);
    t.equal(ix.dense!.size, chunks.length, `${label}: every stored vector indexed`);
    const fresh = reference(chunks, analyzer);
    const queries = queriesFrom(chunks, 30, 3);
    t.same(queries.map((q) => ix.lexical.search(q, 20)), queries.map((q) => fresh(q, 20)), `${label}: scores equal a fresh Bm25Index`);
  };

  const ix = await CollectionIndexes.open(dir, store.getCollection('docs')!, store, { analyzer, persistAfterRebuild: false });
  t.equal(ix.stats().source, 'rebuild');
  t.equal(ix.version, 2);
  check(ix, 'rebuilt');

  // Document A re-ingested: its old chunks go, the new ones come.
  const commit = store.replaceDocument(c.id, docA.id, versionOf('https://h/a', 'c'.repeat(64)), newChunks(60, 3), makeVectors(60, DIM, 3));
  await ix.apply(commit, store.getCollection('docs')!);
  t.equal(ix.version, 3);
  check(ix, 'after a re-ingest');
  const nearest = ix.dense!.search(commit.vectors![7], 1)[0];
  t.equal(nearest.id, commit.added[7].id, 'the new vectors are searchable');

  // Document B deleted.
  const del = store.deleteDocument(c.id, docB.id);
  await ix.removeChunks(del.version, del.removedChunkIds);
  t.equal(ix.version, 4);
  check(ix, 'after a delete');

  await ix.persist();
  const reopened = await CollectionIndexes.open(dir, store.getCollection('docs')!, store, { analyzer, persistAfterRebuild: false });
  t.equal(reopened.stats().source, 'snapshot', 'version unchanged: loaded from the snapshot');
  check(reopened, 'reloaded');
});
