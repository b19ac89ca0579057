/**
 * GET /ready through the real app: a collection that was only ingested into (never searched) is
 * opened by the committing process and named with its version; after a restart on the same
 * DATA_DIR its first search loads that fresh snapshot, with no catch-up from SQLite. With API keys
 * on, /ready (it names collections) needs a key while /health stays open.
 */
import t from 'tap';
import { buildTestApp, testConfig } from '../helper.ts';
import { jobEnded, kbWorld } from './surface-fixtures.ts';
import { pollUntil } from '../poll.ts';

interface Ready {
  ready: boolean;
  loading: { collection: string }[];
  open: { collection: string; source: string; version: number; opened_by: string }[];
}

t.test('an ingest-only collection is kept fresh on disk; the restarted server opens the snapshot', async (t) => {
  const config = testConfig(t, { ALLOW_PRIVATE_NETWORKS: 'true' });
  const world = await kbWorld(t, { ALLOW_PRIVATE_NETWORKS: 'true', DATA_DIR: config.DATA_DIR });
  const { app, urls } = world;
  const empty = (await app.inject('/ready')).json() as Ready;
  t.same(empty, { ready: true, loading: [], open: [] }, 'nothing open, nothing loading');

  const accepted = await app.inject({ method: 'POST', url: '/v1/collections/animals/documents', payload: { urls: [urls.otters, urls.volcanoes, urls.bread] } });
  t.equal(accepted.statusCode, 202, accepted.body);
  const job = await jobEnded(app, accepted.json().id);
  t.equal(job.status, 'succeeded');
  const version = (await app.inject('/v1/collections/animals')).json().version as number;
  t.ok(version > 0);

  // The committing process opens the index itself (it fits the cache), without any search.
  let ready: Ready | undefined;
  await pollUntil(async () => {
    ready = (await app.inject('/ready')).json() as Ready;
    return ready.loading.length === 0 && ready.open.some((o) => o.collection === 'animals' && o.version === version);
  }, 'the committed collection open at its version');
  const open = ready!.open.find((o) => o.collection === 'animals')!;
  t.equal(open.opened_by, 'commit');
  t.equal(ready!.ready, true);
  await app.close();

  const again = await buildTestApp(t, { config });
  const search = await again.inject({ method: 'POST', url: '/v1/collections/animals/search', payload: { query: 'otters', min_confidence: 'none' } });
  t.equal(search.statusCode, 200, search.body);
  t.ok(search.json().results.length > 0, 'the restarted server answers');
  const after = (await again.inject('/ready')).json() as Ready;
  t.match(after.open.find((o) => o.collection === 'animals'), { source: 'snapshot', version, opened_by: 'search' }, 'loaded from the fresh snapshot, no catch-up');
});

t.test('/ready is behind auth (it names collections); /health stays open', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: 'ready-key' } });
  t.equal((await app.inject('/health')).statusCode, 200);
  const anonymous = await app.inject('/ready');
  t.equal(anonymous.statusCode, 401);
  t.equal(anonymous.json().code, 'UNAUTHORIZED');
  const keyed = await app.inject({ url: '/ready', headers: { authorization: 'Bearer ready-key' } });
  t.equal(keyed.statusCode, 200);
  t.equal(keyed.json().ready, true);
});

t.test('a search while the index is still loading answers 503 INDEX_LOADING with Retry-After, then the answer; /health stays up', async (t) => {
  const config = testConfig(t, { ALLOW_PRIVATE_NETWORKS: 'true' });
  const world = await kbWorld(t, { ALLOW_PRIVATE_NETWORKS: 'true', DATA_DIR: config.DATA_DIR });
  // A collection big enough that opening its snapshot (reading, checking and decoding a few MB)
  // spans many turns of the event loop: with no wait allowed the first search cannot find it open.
  const words = ['harbour', 'crane', 'ledger', 'otter', 'glacier', 'lantern', 'orchard', 'quarry', 'meadow', 'furnace'];
  const lines: string[] = [];
  for (let i = 0; i < 30_000; i++) lines.push(`Entry ${i}: the ${words[i % 10]} near ${words[(i * 7) % 10]} holds item${i} and batch${i % 997}.`);
  const url = world.files.add('inventory.txt', Buffer.from(lines.join('\n')), 'text/plain; charset=utf-8');
  const accepted = await world.app.inject({ method: 'POST', url: '/v1/collections/inventory/documents', payload: { urls: [url] } });
  t.equal(accepted.statusCode, 202, accepted.body);
  t.equal((await jobEnded(world.app, accepted.json().id)).status, 'succeeded');
  const version = (await world.app.inject('/v1/collections/inventory')).json().version as number;
  await pollUntil(async () => ((await world.app.inject('/ready')).json() as Ready).open.some((o) => o.collection === 'inventory' && o.version === version), 'the snapshot written at the committed version');
  await world.app.close();

  const again = await buildTestApp(t, { config: { ...config, SEARCH_LOAD_WAIT_MS: 0 } });
  const query = { query: 'item12345 glacier', min_confidence: 'none', top_k: 3 };
  const first = await again.inject({ method: 'POST', url: '/v1/collections/inventory/search', payload: query });
  t.equal(first.statusCode, 503, first.body);
  t.equal(first.json().code, 'INDEX_LOADING');
  t.match(first.json().error, /still loading/);
  t.ok(Number(first.headers['retry-after']) >= 1, `Retry-After: ${first.headers['retry-after']}`);
  t.equal((await again.inject('/health')).statusCode, 200, '/health answers while the index loads');
  let answer: Record<string, any> | undefined;
  await pollUntil(async () => {
    const res = await again.inject({ method: 'POST', url: '/v1/collections/inventory/search', payload: query });
    if (res.statusCode === 503) return false;
    t.equal(res.statusCode, 200, res.body);
    answer = res.json();
    return true;
  }, 'the search answered once the snapshot is loaded');
  t.match(answer!.results[0].text, /item12345\b/, 'the loaded index finds the one chunk naming the item');
  t.match(((await again.inject('/ready')).json() as Ready).open.find((o) => o.collection === 'inventory'), { source: 'snapshot', version });
});
