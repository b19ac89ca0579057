/**
 * Catch-up of a collection's open indexes over the real store, with two SQLite connections on one
 * file as two processes have them: the indexes held by "B" are brought to what "A" committed by
 * diffing chunk ids, and then score exactly as a fresh rebuild (lexical scores bit for bit, the
 * same dense hits and similarities); a snapshot at an older version is loaded and caught up at
 * open; a commit that skips versions catches up instead of claiming them; concurrent catch-ups
 * share one run; and two writers persisting one snapshot folder at once never leave a mix.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs/promises';
import path from 'node:path';
import { KbStore } from '../../src/kb/kb-store.ts';
import { CollectionIndexes, type IndexLog } from '../../src/kb/collection-index.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import type { CollectionRecord } from '../../src/kb/types.ts';
import { makeVectors, tempDir, versionOf } from './fixtures/store-data.ts';
import { newChunks, queriesFrom, reference } from './index-lexical-fixtures.ts';

const DIM = 8;

class Log implements IndexLog {
  lines: Array<Record<string, unknown>> = [];
  info(obj: object) {
    this.lines.push(obj as Record<string, unknown>);
  }
  warn(obj: object) {
    this.lines.push(obj as Record<string, unknown>);
  }
  events(name: string) {
    return this.lines.filter((l) => l.event === name);
  }
}

/** Two connections to one kb.sqlite ("processes" A and B) and a collection on it. */
function shared(t: Test, embedded = true) {
  const root = tempDir(t, 'kb-catch-up-');
  const kbDir = path.join(root, 'kb');
  const a = new KbStore(kbDir);
  const b = new KbStore(kbDir);
  t.teardown(() => {
    a.close();
    b.close();
  });
  const c = a.createCollection('docs', null);
  if (embedded) a.setCollectionEmbedder(c.id, 'test-embedder', DIM);
  let seed = 1;
  const commit = (store: KbStore, key: string, n: number, vectors = embedded) => {
    const s = seed++;
    const doc = store.ensureDocument(c.id, { source: key, source_kind: 'url', source_key: key, filename: null });
    return store.replaceDocument(c.id, doc.id, versionOf(key, String(s).padStart(64, '0')), newChunks(n, s), vectors ? makeVectors(n, DIM, s) : undefined);
  };
  const remove = (store: KbStore, key: string) => store.deleteDocument(c.id, store.findDocumentBySourceKey(c.id, key)!.id);
  const record = (store: KbStore = b): CollectionRecord => store.getCollection('docs')!;
  return { root, kbDir, a, b, c, commit, remove, record, dir: (name: string) => path.join(root, name) };
}

/** Asserts `ix` holds what a fresh rebuild from `store` holds and scores exactly as it does. */
async function sameAsRebuild(t: Test, ix: CollectionIndexes, store: KbStore, dir: string, label: string) {
  const c = store.getCollection('docs')!;
  const analyzer = new Analyzer();
  const fresh = await CollectionIndexes.open(dir, c, store, { analyzer, persistAfterRebuild: false });
  t.equal(fresh.stats().source, 'rebuild');
  t.equal(ix.version, c.version, `${label}: at the store's version`);
  t.strictSame(ix.lexical.ids(), fresh.lexical.ids(), `${label}: the same chunks, lexical`);
  t.strictSame(ix.dense?.ids() ?? null, fresh.dense?.ids() ?? null, `${label}: the same points, dense`);
  const chunks = [...store.iterateChunks(c.id)];
  const queries = queriesFrom(chunks, 40, 5);
  const ref = reference(chunks, analyzer);
  t.strictSame(
    queries.map((q) => ix.lexical.search(q, 20)),
    queries.map((q) => fresh.lexical.search(q, 20)),
    `${label}: lexical scores bit for bit as a rebuild`,
  );
  t.strictSame(
    queries.map((q) => ix.lexical.search(q, 20)),
    queries.map((q) => ref(q, 20)),
    `${label}: and as a fresh Bm25Index`,
  );
  if (fresh.dense) {
    const probes = [...makeVectors(10, DIM, 999), ...[...store.iterateVectors(c.id)].slice(0, 10).map((v) => v.vector)];
    t.strictSame(
      probes.map((v) => ix.dense!.search(v, 10)),
      probes.map((v) => fresh.dense!.search(v, 10)),
      `${label}: the same dense hits and similarities`,
    );
  }
}

t.test('catch-up of open indexes equals a fresh rebuild (re-ingest, add, delete by another connection)', async (t) => {
  const s = shared(t);
  s.commit(s.a, 'https://h/1', 120);
  s.commit(s.a, 'https://h/2', 80);
  const log = new Log();
  const ix = await CollectionIndexes.open(s.dir('b'), s.record(), s.b, { log, persistAfterRebuild: false });
  t.equal(ix.version, 2);

  s.commit(s.a, 'https://h/1', 60); // re-ingested: new ids, old ones gone
  s.commit(s.a, 'https://h/3', 90);
  s.remove(s.a, 'https://h/2');
  t.equal(s.record().version, 5);
  t.equal(await ix.catchUp(2), null, 'a version already reached: nothing to do');

  const r = await ix.catchUp(5);
  t.match(r, { from: 2, to: 5, added: 150, removed: 200 });
  t.equal(ix.version, 5);
  t.equal(log.events('kb.index_caught_up').length, 1);
  await sameAsRebuild(t, ix, s.b, s.dir('fresh'), 'caught up');
  t.equal(await ix.catchUp(), null, 'caught up: a second call finds nothing new');
});

t.test('additions alone are read past the highest id held; any removal (the top chunks too) takes the full diff; each equals a rebuild', async (t) => {
  const s = shared(t);
  s.commit(s.a, 'https://h/1', 70);
  s.commit(s.a, 'https://h/2', 50);
  // B's store, counting the reads that list a collection's ids from the start.
  let fullListings = 0;
  const counted = new Proxy(s.b, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      if (key === 'collectionChunkIds') return (...args: unknown[]) => (fullListings++, (value as (...a: unknown[]) => unknown).apply(target, args));
      if (key === 'chunkIdPage') return (collectionId: number, afterId: number, limit: number) => (afterId === 0 && fullListings++, target.chunkIdPage(collectionId, afterId, limit));
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  const ix = await CollectionIndexes.open(s.dir('b'), s.record(), counted, { persistAfterRebuild: false });
  fullListings = 0;

  s.commit(s.a, 'https://h/3', 40);
  s.commit(s.a, 'https://h/4', 30);
  t.match(await ix.catchUp(), { from: 2, to: 4, added: 70, removed: 0 });
  t.equal(fullListings, 0, 'only additions: no listing of every id');
  await sameAsRebuild(t, ix, s.b, s.dir('fresh-1'), 'additions');

  // The document holding the highest ids goes and another comes: the count below the old top is short.
  s.remove(s.a, 'https://h/4');
  s.commit(s.a, 'https://h/5', 20);
  t.match(await ix.catchUp(), { to: 6, added: 20, removed: 30 });
  t.ok(fullListings > 0, 'a removal of the top chunks: the full diff');
  await sameAsRebuild(t, ix, s.b, s.dir('fresh-2'), 'top removed');

  // A document in the middle re-ingested (its old ids go, new ones come above every other).
  fullListings = 0;
  s.commit(s.a, 'https://h/2', 45);
  t.match(await ix.catchUp(), { to: 7, added: 45, removed: 50 });
  t.ok(fullListings > 0, 'a removal in the middle: the full diff');
  await sameAsRebuild(t, ix, s.b, s.dir('fresh-3'), 'middle re-ingested');

  // Additions after those removals: the fast path again.
  fullListings = 0;
  s.commit(s.a, 'https://h/6', 10);
  s.commit(s.a, 'https://h/7', 10);
  t.match(await ix.catchUp(), { to: 9, added: 20, removed: 0 });
  t.equal(fullListings, 0, 'additions again: no listing');
  await sameAsRebuild(t, ix, s.b, s.dir('fresh-4'), 'additions after removals');
});

t.test('concurrent catch-ups share one run; a commit that skips versions catches up instead of claiming them', async (t) => {
  const s = shared(t);
  s.commit(s.a, 'https://h/1', 50);
  const log = new Log();
  const ix = await CollectionIndexes.open(s.dir('b'), s.record(), s.b, { log, persistAfterRebuild: false });
  s.commit(s.a, 'https://h/2', 40);
  s.commit(s.a, 'https://h/3', 30);
  const results = await Promise.all(Array.from({ length: 6 }, () => ix.catchUp(3)));
  t.equal(log.events('kb.index_caught_up').length, 1, 'six callers, one catch-up');
  for (const r of results) t.equal(r, results[0], 'every caller gets the same result');
  t.match(results[0], { from: 1, to: 3, added: 70 });

  // B's own commit lands after one by A it has not seen: applying B's alone would skip A's.
  s.commit(s.a, 'https://h/4', 25);
  const mine = s.commit(s.b, 'https://h/5', 15);
  t.equal(mine.version, 5);
  await ix.apply(mine, s.record());
  t.equal(ix.version, 5);
  t.ok(s.a.findDocumentBySourceKey(s.c.id, 'https://h/4') && ix.lexical.size === 50 + 40 + 30 + 25 + 15, "A's commit came in with B's");
  // The same for a delete.
  s.commit(s.a, 'https://h/6', 10);
  const del = s.remove(s.b, 'https://h/1');
  await ix.removeChunks(del.version, del.removedChunkIds);
  t.equal(ix.version, 7);
  await sameAsRebuild(t, ix, s.b, s.dir('fresh'), 'after gaps');
});

t.test('a snapshot at an older version is loaded and caught up at open, equal to a rebuild', async (t) => {
  const s = shared(t);
  s.commit(s.a, 'https://h/1', 200);
  s.commit(s.a, 'https://h/2', 100);
  const first = await CollectionIndexes.open(s.dir('b'), s.record(), s.b, { persistAfterRebuild: false });
  await first.persist();
  t.equal(first.stats().persisted_version, 2);

  // Workers commit while no API process is up.
  s.commit(s.a, 'https://h/3', 70);
  s.commit(s.a, 'https://h/1', 30);
  s.remove(s.a, 'https://h/2');
  const log = new Log();
  const reopened = await CollectionIndexes.open(s.dir('b'), s.record(), s.b, { log, persistAfterRebuild: false });
  t.equal(reopened.stats().source, 'snapshot+catch-up');
  t.equal(log.events('kb.index_rebuild').length, 0, 'not rebuilt');
  t.match(log.events('kb.index_loaded')[0], { snapshot_version: 2, version: 5, caught_up: { added: 100, removed: 300 } });
  await sameAsRebuild(t, reopened, s.b, s.dir('fresh'), 'stale snapshot + catch-up');

  // Still refused: a snapshot of another analyzer (or a corrupt one) is rebuilt, not caught up.
  const log2 = new Log();
  await CollectionIndexes.open(s.dir('b'), s.record(), s.b, { log: log2, analyzer: new Analyzer({ stem: false }), persistAfterRebuild: false });
  t.match(log2.events('kb.index_rebuild')[0], { reason: /analyzer/ });
  const lexFile = path.join(s.dir('b'), 'lexical.bin');
  const bytes = await fs.readFile(lexFile);
  bytes[64] ^= 0xff;
  await fs.writeFile(lexFile, bytes);
  const log3 = new Log();
  const rebuilt = await CollectionIndexes.open(s.dir('b'), s.record(), s.b, { log: log3, persistAfterRebuild: false });
  t.equal(rebuilt.stats().source, 'rebuild');
  t.match(log3.events('kb.index_rebuild')[0], { reason: /lexical snapshot/ });
});

t.test('an older lexical-only snapshot catches up the embedder chosen since', async (t) => {
  const s = shared(t, false);
  s.commit(s.a, 'https://h/1', 60, false);
  const first = await CollectionIndexes.open(s.dir('b'), s.record(), s.b, { persistAfterRebuild: false });
  t.equal(first.dense, null);
  await first.persist();
  s.a.setCollectionEmbedder(s.c.id, 'test-embedder', DIM);
  const doc = s.a.ensureDocument(s.c.id, { source: 'https://h/2', source_kind: 'url', source_key: 'https://h/2', filename: null });
  s.a.replaceDocument(s.c.id, doc.id, versionOf('https://h/2', 'e'.repeat(64)), newChunks(40, 77), makeVectors(40, DIM, 77));
  const reopened = await CollectionIndexes.open(s.dir('b'), s.record(), s.b, { persistAfterRebuild: false });
  t.equal(reopened.stats().source, 'snapshot+catch-up');
  t.equal(reopened.dense?.size, 40, 'the embedded chunks are in a new dense index');
  await sameAsRebuild(t, reopened, s.b, s.dir('fresh'), 'embedder added');
});

t.test('two writers persisting one snapshot folder at once never leave a mix; a held lease defers the write', async (t) => {
  const s = shared(t);
  s.commit(s.a, 'https://h/0', 150);
  const dir = s.dir('shared');
  const ixA = await CollectionIndexes.open(dir, s.record(s.a), s.a, { persistAfterRebuild: false });
  const ixB = await CollectionIndexes.open(dir, s.record(s.b), s.b, { persistAfterRebuild: false });
  for (let round = 1; round <= 8; round++) {
    const commit = s.commit(s.a, `https://h/${round}`, 40 + round);
    await ixA.apply(commit, s.record(s.a));
    // B behind on odd rounds, caught up on even ones: the writers race at different versions too.
    if (round % 2 === 0) await ixB.catchUp();
    await Promise.all([ixA.persist(), ixB.persist(), ixA.persist(), ixB.persist()]);
    const log = new Log();
    const loaded = await CollectionIndexes.open(dir, s.record(), s.b, { log, persistAfterRebuild: false });
    t.same(log.events('kb.index_rebuild'), [], `round ${round}: the folder holds a whole snapshot`);
    t.equal(loaded.version, s.record().version);
    const files = (await fs.readdir(dir)).filter((f) => f.includes('.tmp-'));
    t.same(files, [], `round ${round}: no temp files left`);
  }
  await ixB.catchUp();
  await sameAsRebuild(t, ixB, s.b, s.dir('fresh'), 'B after the races');

  // Caught mid-write: while A writes (holding the lease), B's persist is deferred, not interleaved.
  const key = `index-snapshot:${s.c.id}`;
  const next = s.commit(s.a, 'https://h/mid', 30);
  await ixA.apply(next, s.record(s.a));
  await ixB.catchUp();
  const writing = ixA.persist();
  for (let i = 0; i < 1000 && s.b.leaseHolder(key) === null; i++) await new Promise((r) => setImmediate(r));
  t.not(s.b.leaseHolder(key), null, 'A holds the lease while it writes');
  await ixB.persist();
  t.equal(ixB.persistPending, true, "B's write waits for A's");
  await writing;
  t.equal(s.b.leaseHolder(key), null, 'released after the write');
  const afterMid = new Log();
  const whole = await CollectionIndexes.open(dir, s.record(), s.b, { log: afterMid, persistAfterRebuild: false });
  t.equal(whole.stats().source, 'snapshot', "A's snapshot is whole");
  await ixB.persist();
  t.equal(ixB.persistPending, false, "B's retry finds A's snapshot at its version and skips the write");
  t.equal(ixB.stats().persisted_version, ixB.version);

  // Another process holds the lease: the write is deferred (persistPending), then done after it lapses.
  const commit = s.commit(s.a, 'https://h/late', 12);
  await ixA.apply(commit, s.record(s.a));
  t.ok(s.b.acquireLease(`index-snapshot:${s.c.id}`, 'other-process', 60_000));
  t.notOk(s.a.acquireLease(`index-snapshot:${s.c.id}`, 'yet-another', 60_000), 'one holder at a time');
  await ixA.persist();
  t.equal(ixA.persistPending, true, 'deferred while another process writes');
  t.not(ixA.stats().persisted_version, ixA.version);
  s.b.releaseLease(`index-snapshot:${s.c.id}`, 'other-process');
  await ixA.persist();
  t.equal(ixA.persistPending, false);
  t.equal(ixA.stats().persisted_version, ixA.version);
  // A reader that finds the folder mid-write (a mismatch while another process holds the lease)
  // waits for the write to end and reads again, instead of rebuilding.
  const lexFile = path.join(dir, 'lexical.bin');
  const good = await fs.readFile(lexFile);
  t.ok(s.b.acquireLease(`index-snapshot:${s.c.id}`, 'writer-process', 60_000));
  await fs.writeFile(lexFile, good.subarray(0, good.length - 10)); // as if half replaced
  const log = new Log();
  const opening = CollectionIndexes.open(dir, s.record(), s.b, { log, persistAfterRebuild: false });
  await new Promise((r) => setTimeout(r, 200));
  await fs.writeFile(lexFile, good); // the writer finishes
  s.b.releaseLease(`index-snapshot:${s.c.id}`, 'writer-process');
  const reader = await opening;
  t.equal(reader.stats().source, 'snapshot', 'read again after the write, not rebuilt');
  t.same(log.events('kb.index_rebuild'), []);

  // A lease left by a process that died expires.
  t.ok(s.b.acquireLease('index-snapshot:x', 'dead-process', 1));
  await new Promise((r) => setTimeout(r, 5));
  t.ok(s.a.acquireLease('index-snapshot:x', 'alive', 60_000), 'an expired lease is taken over');
  t.equal(s.b.leaseHolder('index-snapshot:x'), 'alive');
});
