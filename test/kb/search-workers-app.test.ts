/**
 * Search worker threads through the REST API (src/kb/search-pool.ts): a collection whose index was
 * saved is searched by a worker thread over its snapshot's shared bytes, after the persist that
 * follows its ingestion and again after a restart, and each answer equals the one the main thread
 * gave before (ids, scores, texts). SEARCH_WORKER_MIN_CHUNKS is lowered so a small collection
 * qualifies.
 */
import t from 'tap';
import { buildTestApp, testConfig } from '../helper.ts';
import { pollUntil } from '../poll.ts';
import { jobEnded, kbWorld } from './surface-fixtures.ts';

const ENV = { ALLOW_PRIVATE_NETWORKS: 'true', SEARCH_WORKERS: '2', SEARCH_WORKER_MIN_CHUNKS: '1' };
const QUERIES = ['harbour crane crate', 'ledger at dawn', 'crate1234', 'the quiet otter ledger7'];

t.test('searches go to the worker threads after the persist and after a restart, with the same answers', async (t) => {
  const config = testConfig(t, ENV);
  const world = await kbWorld(t, { ...ENV, DATA_DIR: config.DATA_DIR });
  const { app } = world;
  const lines: string[] = [];
  for (let i = 0; i < 3_000; i++) lines.push(`Line ${i}: the harbour crane lifts crate${i} beside ledger${i % 97} at dawn${i % 13 === 0 ? ', a quiet otter watching' : ''}.`);
  const url = world.files.add('manifest.txt', Buffer.from(lines.join('\n')), 'text/plain; charset=utf-8');
  const job = await app.inject({ method: 'POST', url: '/v1/collections/docks/documents', payload: { urls: [url] } });
  t.equal((await jobEnded(app, job.json().id)).status, 'succeeded');

  type Hit = { chunk_id: number; score: number; text: string };
  const search = async (a: typeof app, query: string): Promise<Hit[]> => {
    const res = await a.inject({ method: 'POST', url: '/v1/collections/docks/search', payload: { query, top_k: 8, min_confidence: 'none' } });
    if (res.statusCode !== 200) t.fail(`search: ${res.statusCode} ${res.body}`);
    return (res.json().results as Hit[]).map((h) => ({ chunk_id: h.chunk_id, score: h.score, text: h.text }));
  };
  const workers = async (a: typeof app) => (await a.inject('/v1/system/health')).json().features.knowledge_base.searches.workers as { searched: number; replicas: number };

  // Right after the commit the index is the main thread's own (changed since any snapshot).
  const before: Hit[][] = [];
  for (const q of QUERIES) before.push(await search(app, q));
  t.ok(before.every((hits) => hits.length > 0), 'every query has hits');
  t.equal((await workers(app)).searched, 0, 'answered on the main thread');

  // The persist after the commit reopens the index over the bytes it wrote: workers take over.
  await pollUntil(async () => {
    await search(app, QUERIES[0]);
    return (await workers(app)).searched > 0;
  }, 'a search answered by a worker after the persist');
  const from = (await workers(app)).searched;
  for (const [i, q] of QUERIES.entries()) t.same(await search(app, q), before[i], `"${q}": the worker's answer is the main thread's`);
  t.equal((await workers(app)).searched, from + QUERIES.length, 'each answered by a worker');
  await app.close();

  // A restart loads the snapshot into shared memory: workers again, same answers.
  const again = await buildTestApp(t, { config });
  await pollUntil(async () => {
    await search(again, QUERIES[0]);
    return (await workers(again)).searched > 0;
  }, 'a search answered by a worker after the restart');
  for (const [i, q] of QUERIES.entries()) t.same(await search(again, q), before[i], `"${q}" after the restart: the same answer`);
});
