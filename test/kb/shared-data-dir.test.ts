/**
 * Two knowledge bases on one DATA_DIR, as two server processes share it (an ingestion worker and
 * an API replica, or `--workers N`): each has its own SQLite connection and its own in-memory
 * indexes. A document committed by one is found by a search on the other through the version
 * check on read (no bus at all), and promptly through a collection notice when they share a bus
 * (a LocalBus standing in for Redis pub/sub); a deleted document or collection goes away there too.
 */
import t from 'tap';
import pino from 'pino';
import { KnowledgeBase } from '../../src/kb/knowledge-base.ts';
import { LocalBus } from '../../src/redis/bus.ts';
import { testConfig } from '../helper.ts';
import { serve, startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';
import { tempDir } from './fixtures/store-data.ts';

const search = (kb: { search: KnowledgeBase['search'] }, collection: string, query: string) =>
  kb.search(collection, { query, top_k: 5 }, { signal: AbortSignal.timeout(30_000) });

t.test('without a bus: a commit on A is found by a search on B (version check), a delete disappears', async (t) => {
  const dataDir = tempDir(t, 'kb-shared-');
  const a = await startKb(t, { DATA_DIR: dataDir });
  const b = await startKb(t, { DATA_DIR: dataDir }, {}, a.server);
  serve(a.server, '/walrus.txt', TEXT_DOC('walrus'), 'text/plain');
  serve(a.server, '/pelican.txt', TEXT_DOC('pelican'), 'text/plain');

  a.kb.createCollection('zoo', null);
  let job = await a.kb.addDocuments('zoo', { urls: [`${a.server.origin}/walrus.txt`] });
  t.equal((await waitEnded(a.kb, job)).status, 'succeeded');
  // B opens its indexes now (at the first version) and holds them.
  const first = await search(b.kb, 'zoo', 'walrus');
  t.equal(first.results.length, 1, 'B sees what was committed before it opened');

  job = await a.kb.addDocuments('zoo', { urls: [`${a.server.origin}/pelican.txt`] });
  t.equal((await waitEnded(a.kb, job)).status, 'succeeded');
  const second = await search(b.kb, 'zoo', 'pelican');
  t.equal(second.results.length, 1, "B's open indexes caught up with A's commit on read");
  t.match(second.results[0]!.source, /pelican\.txt$/);
  t.equal(second.total_chunks, b.kb.getCollection('zoo').stats.chunks);

  const walrus = a.kb.listDocuments('zoo', {}).items.find((d) => d.source.endsWith('walrus.txt'))!;
  await a.kb.deleteDocument('zoo', walrus.id);
  const gone = await search(b.kb, 'zoo', 'walrus');
  t.equal(gone.results.length, 0, "the document A deleted is gone from B's results");
  t.equal((await search(b.kb, 'zoo', 'pelican')).results.length, 1, 'the other document stays');

  // Same answers, same scores, as A (whose indexes followed its own commits) and as a fresh open.
  const onA = await search(a.kb, 'zoo', 'pelican walrus notes');
  const onB = await search(b.kb, 'zoo', 'pelican walrus notes');
  t.same(onB.results.map((h) => [h.chunk_id, h.score]), onA.results.map((h) => [h.chunk_id, h.score]));
});

t.test('with a shared bus: B catches up from the notice before any search; notices for unopened collections are ignored; a deleted collection is dropped', async (t) => {
  const dataDir = tempDir(t, 'kb-shared-bus-');
  const fx = await startKb(t, { DATA_DIR: dataDir });
  serve(fx.server, '/otter.txt', TEXT_DOC('otter'), 'text/plain');
  serve(fx.server, '/heron.txt', TEXT_DOC('heron'), 'text/plain');
  serve(fx.server, '/lynx.txt', TEXT_DOC('lynx'), 'text/plain');
  const config = testConfig(t, { DATA_DIR: dataDir, ALLOW_PRIVATE_NETWORKS: 'true' });
  const bus = new LocalBus();
  const events: Array<Record<string, unknown>> = [];
  const logB = {
    info: (obj: object) => void events.push(obj as Record<string, unknown>),
    warn: (obj: object) => void events.push(obj as Record<string, unknown>),
    debug: () => {},
  };
  const kbA = new KnowledgeBase({ config, documents: fx.services.documents, models: null, log: pino({ level: 'silent' }), bus });
  const kbB = new KnowledgeBase({ config, documents: fx.services.documents, models: null, log: logB, bus });
  t.teardown(async () => {
    await kbA.close();
    await kbB.close();
  });

  kbA.createCollection('river', null);
  kbA.createCollection('forest', null);
  let job = await kbA.addDocuments('river', { urls: [`${fx.server.origin}/otter.txt`] });
  await waitEnded(kbA, job);
  t.equal((await search(kbB, 'river', 'otter')).results.length, 1);
  t.equal(kbB.stats().indexes_open, 1);

  const caughtUp = () => events.filter((e) => e.event === 'kb.index_caught_up' && e.collection === 'river');
  job = await kbA.addDocuments('river', { urls: [`${fx.server.origin}/heron.txt`] });
  await waitEnded(kbA, job);
  for (let i = 0; i < 200 && caughtUp().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  t.equal(caughtUp().length, 1, 'the notice made B catch up, without a search');
  const version = kbA.getCollection('river').version;
  t.match(caughtUp()[0], { to: version, added: 1, removed: 0 });
  t.equal((await search(kbB, 'river', 'heron')).results.length, 1);
  t.equal(caughtUp().length, 1, 'the search found the indexes current: no second catch-up');

  // A collection B never opened: its notices change nothing on B.
  job = await kbA.addDocuments('forest', { urls: [`${fx.server.origin}/lynx.txt`] });
  await waitEnded(kbA, job);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(events.filter((e) => e.collection === 'forest').length, 0, 'no catch-up or open for an unopened collection');
  t.equal(kbB.stats().indexes_open, 1);

  // A deleted document: B's results lose it after the notice.
  const otter = kbA.listDocuments('river', {}).items.find((d) => d.source.endsWith('otter.txt'))!;
  await kbA.deleteDocument('river', otter.id);
  for (let i = 0; i < 200 && caughtUp().length < 2; i++) await new Promise((r) => setTimeout(r, 25));
  t.equal(caughtUp().length, 2, 'the delete notice made B catch up');
  t.match(caughtUp()[1], { added: 0, removed: 1 });
  t.equal((await search(kbB, 'river', 'otter')).results.length, 0);

  // The collection deleted on A: B drops its indexes at once and answers NOT_FOUND.
  await kbA.deleteCollection('river');
  for (let i = 0; i < 200 && kbB.stats().indexes_open !== 0; i++) await new Promise((r) => setTimeout(r, 25));
  t.equal(kbB.stats().indexes_open, 0, "B dropped the deleted collection's indexes");
  await t.rejects(search(kbB, 'river', 'heron'), { code: 'NOT_FOUND' });
});
