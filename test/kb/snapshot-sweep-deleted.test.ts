/**
 * The start-up sweep of the collection snapshots (index-snapshot.ts sweepSnapshotLeftovers, run
 * once per folder by CollectionIndexes.open): a version moved aside by a write that a kill
 * interrupted is put back when its collection exists, and removed when the collection was deleted
 * since (before, it was put back as a folder that nothing ever read or removed).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { CollectionIndexes } from '../../src/kb/collection-index.ts';
import { KbStore } from '../../src/kb/kb-store.ts';
import type { NewChunk } from '../../src/kb/types.ts';
import { makeVectors, tempDir, versionOf } from './fixtures/store-data.ts';
import { deadPid } from '../dead-pid.ts';

const DIM = 8;


const chunk = (text: string): NewChunk => ({ ord: 0, text, page_start: null, page_end: null, heading_path: [], char_start: 0, char_end: text.length, importance: 0.5, content_type: 'text' });

t.test('a moved-aside snapshot is put back for a live collection and removed for a deleted one', async (t) => {
  const root = tempDir(t);
  const first = path.join(root, 'first');
  const store = new KbStore(first);
  const live = store.createCollection('live', null);
  store.setCollectionEmbedder(live.id, 'test-embedder', DIM);
  const doc = store.ensureDocument(live.id, { source: 'https://h/a', source_kind: 'url', source_key: 'https://h/a', filename: null });
  store.replaceDocument(live.id, doc.id, versionOf('https://h/a', 'a'.repeat(64)), [chunk('The heron nests by the river.')], makeVectors(1, DIM, 1));
  const gone = store.createCollection('gone', null);
  const ix = await CollectionIndexes.open(path.join(first, 'indexes', String(live.id)), store.getCollection('live')!, store);
  await ix.persist();
  store.deleteCollection(gone.id);
  store.close();

  // The data folder as a kill -9 mid-swap leaves it, copied to a path this process has not swept:
  // the live collection's folder moved aside (no replacement yet), and a moved-aside version of
  // the deleted collection's.
  const kb = path.join(root, 'second');
  fs.cpSync(first, kb, { recursive: true });
  const indexes = path.join(kb, 'indexes');
  const pid = deadPid();
  const liveAside = `.old-p${pid}-${live.id}-0123456789ab`;
  const goneAside = `.old-p${pid}-${gone.id}-0123456789ab`;
  fs.cpSync(path.join(indexes, String(live.id)), path.join(indexes, goneAside), { recursive: true });
  fs.renameSync(path.join(indexes, String(live.id)), path.join(indexes, liveAside));

  const reopened = new KbStore(kb);
  t.teardown(() => reopened.close());
  const again = await CollectionIndexes.open(path.join(indexes, String(live.id)), reopened.getCollection('live')!, reopened);
  const names = fs.readdirSync(indexes).sort();
  t.same(names, [String(live.id)], "the live collection's folder is back; nothing of the deleted one is left");
  t.equal(again.lexical.search('heron', 5).length, 1, 'the live collection answers from its snapshot');
});
