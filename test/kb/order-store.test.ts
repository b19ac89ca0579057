/**
 * The ordering rule in the store itself (kb-store.ts, replaceDocument and recordSkipped): a
 * version carrying an older read than the stored one is discarded inside the commit's
 * transaction (chunks, version and row unchanged, a 'skipped' history row saying why); an
 * unchanged re-read raises the stored read number, so an older read of other content arriving
 * later loses to it; a skip is refused once the stored content changed.
 */
import path from 'node:path';
import t from 'tap';
import { KbStore } from '../../src/kb/kb-store.ts';
import { makeChunks, tempDir, versionOf } from './fixtures/store-data.ts';

const SHA = (c: string) => c.repeat(64);

t.test('an older read is discarded at commit; a newer one replaces; an unchanged re-read counts as the newest read', async (t) => {
  const store = new KbStore(path.join(tempDir(t), 'kb'));
  t.teardown(() => store.close());
  const c = store.createCollection('docs', null);
  const doc = store.ensureDocument(c.id, { source: 'https://h/a', source_kind: 'url', source_key: 'https://h/a', filename: null });
  const [r1, r2, r3, r4] = [store.takeReadSeq(), store.takeReadSeq(), store.takeReadSeq(), store.takeReadSeq()];

  const newer = store.replaceDocument(c.id, doc.id, versionOf('https://h/a', SHA('b'), { read_seq: r2, job_id: 'job_b' }), makeChunks(3, 'v2'));
  t.notOk(newer.superseded);
  const chunksAfterV2 = store.documentChunks(doc.id).map((ch) => [ch.id, ch.text]);

  const older = store.replaceDocument(c.id, doc.id, versionOf('https://h/a', SHA('a'), { read_seq: r1, job_id: 'job_a' }), makeChunks(5, 'v1'));
  t.same(older.superseded, { read_seq: r1, stored_read_seq: r2 }, 'the older read is discarded');
  t.equal(older.version, newer.version, 'the collection version is unchanged');
  t.same(older.added, []);
  t.same(older.removedChunkIds, []);
  t.equal(store.getDocument(c.id, doc.id)!.content_sha256, SHA('b'), 'the row keeps the newer version');
  t.same(store.documentChunks(doc.id).map((ch) => [ch.id, ch.text]), chunksAfterV2, 'and its chunks');
  const last = store.history(doc.id).at(-1)!;
  t.match(last, { action: 'skipped', content_sha256: SHA('a'), job_id: 'job_a', detail: /superseded/ });

  // Re-read of the same content at r4: recorded, and the stored read becomes r4.
  t.equal(store.recordSkipped(doc.id, SHA('b'), 'job_d', r4), true);
  const stale = store.replaceDocument(c.id, doc.id, versionOf('https://h/a', SHA('c'), { read_seq: r3 }), makeChunks(2, 'v3'));
  t.same(stale.superseded, { read_seq: r3, stored_read_seq: r4 }, 'a read older than the unchanged re-read loses');

  const r5 = store.takeReadSeq();
  const next = store.replaceDocument(c.id, doc.id, versionOf('https://h/a', SHA('d'), { read_seq: r5 }), makeChunks(2, 'v4'));
  t.notOk(next.superseded, 'a newer read replaces');
  t.equal(next.version, newer.version + 1);
  t.equal(store.recordSkipped(doc.id, SHA('b'), 'job_e', store.takeReadSeq()), false, 'a skip for content no longer stored is refused');
  t.equal(store.getDocument(c.id, doc.id)!.content_sha256, SHA('d'));
});

t.test('versions without a read number are not ordered (callers from before the rule)', async (t) => {
  const store = new KbStore(path.join(tempDir(t), 'kb'));
  t.teardown(() => store.close());
  const c = store.createCollection('docs', null);
  const doc = store.ensureDocument(c.id, { source: 'https://h/a', source_kind: 'url', source_key: 'https://h/a', filename: null });
  store.replaceDocument(c.id, doc.id, versionOf('https://h/a', SHA('a'), { read_seq: store.takeReadSeq() }), makeChunks(1, 'v1'));
  const unordered = store.replaceDocument(c.id, doc.id, versionOf('https://h/a', SHA('b')), makeChunks(1, 'v2'));
  t.notOk(unordered.superseded);
  t.equal(store.getDocument(c.id, doc.id)!.content_sha256, SHA('b'));
});
