/**
 * The database identity under the collection indexes (issue 19, item 4), at the level of the store
 * and the snapshot files: migration 4 gives every database a random id (new files and files from
 * before it alike) that stays with the file; a snapshot of another database, or of format 1
 * (written before the id), is rebuilt from SQLite and then overwritten with this database's; the
 * lexical header and the dense manifest refuse a loader that names another database.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import t from 'tap';
import { COLLECTION_INDEX_FORMAT, CollectionIndexes } from '../../src/kb/collection-index.ts';
import { openKbDatabase } from '../../src/kb/db.ts';
import { CollectionDenseIndex } from '../../src/kb/dense-index.ts';
import { KbStore } from '../../src/kb/kb-store.ts';
import { CollectionLexicalIndex } from '../../src/kb/lexical-index.ts';
import { migrate, MIGRATIONS } from '../../src/kb/migrations.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { makeVectors, tempDir, versionOf } from './fixtures/store-data.ts';
import type { NewChunk } from '../../src/kb/types.ts';

const DIM = 8;
const noPersist = { persistAfterRebuild: false } as const;

function chunks(words: string[]): NewChunk[] {
  return words.map((w, i) => ({
    ord: i,
    text: `A note about ${w}: the ${w} is described here.`,
    page_start: null,
    page_end: null,
    heading_path: [],
    char_start: 0,
    char_end: 40,
    importance: 0.5,
    content_type: 'text',
  }));
}

/** A store with collection "docs" (embedded) holding one document of these words; its indexes saved. */
async function seeded(kbDir: string, words: string[], seed: number): Promise<{ store: KbStore; ix: CollectionIndexes }> {
  const store = new KbStore(kbDir);
  const c = store.createCollection('docs', null);
  store.setCollectionEmbedder(c.id, 'test-embedder', DIM);
  const doc = store.ensureDocument(c.id, { source: 'https://h/a', source_kind: 'url', source_key: 'https://h/a', filename: null });
  store.replaceDocument(c.id, doc.id, versionOf('https://h/a', String(seed).repeat(64).slice(0, 64)), chunks(words), makeVectors(words.length, DIM, seed));
  const ix = await CollectionIndexes.open(path.join(kbDir, 'indexes', String(c.id)), store.getCollection('docs')!, store, noPersist);
  return { store, ix };
}

const removeDatabase = (kbDir: string) => {
  for (const f of fs.readdirSync(kbDir)) if (f.startsWith('kb.sqlite')) fs.rmSync(path.join(kbDir, f));
};

t.test('every database has its own id: made by migration 4, kept across reopen, new for a new file', async (t) => {
  const root = tempDir(t);
  const a = new KbStore(path.join(root, 'a'));
  const id = a.databaseId();
  t.match(id, /^[0-9a-f]{32}$/);
  a.close();
  const again = new KbStore(path.join(root, 'a'));
  t.equal(again.databaseId(), id, 'the same file keeps its id');
  t.same([again.takeReadSeq(), again.takeReadSeq(), again.takeReadSeq()], [1, 2, 3], 'read numbers count up');
  again.close();
  const b = new KbStore(path.join(root, 'b'));
  t.not(b.databaseId(), id, 'another database, another id');
  b.close();

  // A file written before migration 4 (schema 3, with a document) gets an id when opened now.
  const oldDir = path.join(root, 'old');
  const db = openKbDatabase(oldDir);
  migrate(db, MIGRATIONS.slice(0, 3));
  db.prepare("INSERT INTO collections (name, version, created_at, updated_at) VALUES ('docs', 0, 'x', 'x')").run();
  db.close();
  const upgraded = new KbStore(oldDir);
  t.teardown(() => upgraded.close());
  t.match(upgraded.databaseId(), /^[0-9a-f]{32}$/);
  t.equal(upgraded.takeReadSeq(), 1);
  const c = upgraded.getCollection('docs')!;
  const doc = upgraded.ensureDocument(c.id, { source: 'https://h/a', source_kind: 'url', source_key: 'https://h/a', filename: null });
  const first = upgraded.replaceDocument(c.id, doc.id, versionOf('https://h/a', 'a'.repeat(64)), chunks(['otter']));
  t.notOk(first.superseded, 'a row from before the read numbers loses to any read');
});

t.test('kb.sqlite replaced, indexes/ kept: the other database\'s snapshot is rebuilt, then overwritten', async (t) => {
  const root = tempDir(t);
  const kbDir = path.join(root, 'kb');
  const ixDir = path.join(kbDir, 'indexes', '1');
  const old = await seeded(kbDir, ['walrus', 'narwhal', 'puffin'], 1);
  await old.ix.persist();
  old.store.close();
  const oldManifest = JSON.parse(fs.readFileSync(path.join(ixDir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  removeDatabase(kbDir);

  // Same collection id (1), same version (1), same chunk ids (1..3): only the database differs.
  const fresh = await seeded(kbDir, ['pelican', 'heron', 'osprey'], 2);
  t.teardown(() => fresh.store.close());
  t.equal(fresh.ix.stats().source, 'rebuild');
  t.match(fresh.ix.stats().rebuild_reason, /another database/);
  t.equal(fresh.ix.lexical.size, 3);
  t.same(fresh.ix.lexical.search('heron', 5).map((h) => h.id), [2], "the new database's chunk 2 answers for its word");
  t.same(fresh.ix.lexical.search('narwhal', 5), [], "the old database's words answer nothing");
  t.equal(fresh.ix.dense?.size, 3);
  const newVectors = makeVectors(3, DIM, 2);
  t.equal(fresh.ix.dense!.search(newVectors[1]!, 1)[0]?.id, 2, "the dense index holds this database's vectors");

  // Reopened without saving: still the other database's snapshot, still rebuilt.
  const c = fresh.store.getCollection('docs')!;
  const again = await CollectionIndexes.open(ixDir, c, fresh.store, noPersist);
  t.equal(again.stats().source, 'rebuild');
  // Saved now: the folder holds a snapshot at the same version as the old one, which is overwritten.
  await again.persist();
  const saved = JSON.parse(fs.readFileSync(path.join(ixDir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  t.equal(saved.database_id, fresh.store.databaseId());
  t.not(saved.database_id, oldManifest.database_id);
  t.equal(saved.version, oldManifest.version, 'same version as the old snapshot, written anyway');
  const loaded = await CollectionIndexes.open(ixDir, c, fresh.store, noPersist);
  t.equal(loaded.stats().source, 'snapshot', "this database's snapshot is loaded");
});

t.test('a snapshot of format 1 (no database id) is rebuilt', async (t) => {
  const root = tempDir(t);
  const kbDir = path.join(root, 'kb');
  const ixDir = path.join(kbDir, 'indexes', '1');
  const { store, ix } = await seeded(kbDir, ['walrus', 'narwhal'], 3);
  t.teardown(() => store.close());
  await ix.persist();
  // What a server from before the id wrote: format 1, no database_id, a valid checksum.
  const file = path.join(ixDir, 'manifest.json');
  const { checksum: _c, database_id: _d, ...rest } = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  const v1 = { ...rest, format: 1 };
  fs.writeFileSync(file, JSON.stringify({ ...v1, checksum: createHash('sha256').update(JSON.stringify(v1)).digest('hex') }));
  const reopened = await CollectionIndexes.open(ixDir, store.getCollection('docs')!, store, noPersist);
  t.equal(reopened.stats().source, 'rebuild');
  t.match(reopened.stats().rebuild_reason, new RegExp(`format 1, expected ${COLLECTION_INDEX_FORMAT}`));
});

t.test('the lexical header and the dense manifest carry the database id and refuse another', async (t) => {
  const analyzer = new Analyzer();
  const lex = new CollectionLexicalIndex(analyzer);
  lex.add([{ id: 1, text: 'the walrus rests on the ice', heading_path: [] }]);
  const tagged = lex.serialize({ databaseId: 'a'.repeat(32) });
  t.equal(CollectionLexicalIndex.deserialize(tagged, analyzer, { databaseId: 'a'.repeat(32) }).size, 1, 'its own database loads it');
  t.throws(() => CollectionLexicalIndex.deserialize(tagged, analyzer, { databaseId: 'b'.repeat(32) }), { code: 'INTERNAL_ERROR', message: /belong to database a{32}, not b{32}/ });
  t.throws(() => CollectionLexicalIndex.deserialize(lex.serialize(), analyzer, { databaseId: 'b'.repeat(32) }), { message: /none recorded/ }, 'an untagged snapshot is refused by a loader that names its database');
  t.equal(CollectionLexicalIndex.deserialize(tagged, analyzer).size, 1, 'a loader that names none (tools) still reads it');

  const dir = tempDir(t);
  const file = path.join(dir, 'dense.hnsw');
  const dense = await CollectionDenseIndex.create({ embedderId: 'e', dimension: DIM });
  await dense.add([1, 2], makeVectors(2, DIM, 4));
  await dense.save(file, { databaseId: 'a'.repeat(32) });
  t.equal((await CollectionDenseIndex.load(file, { embedderId: 'e', dimension: DIM, databaseId: 'a'.repeat(32) })).size, 2);
  await t.rejects(CollectionDenseIndex.load(file, { embedderId: 'e', dimension: DIM, databaseId: 'b'.repeat(32) }), { code: 'INTERNAL_ERROR', message: /chunk ids of database a{32}, not b{32}/ });
});
