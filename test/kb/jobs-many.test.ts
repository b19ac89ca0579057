/**
 * Many jobs at once: 20 concurrent jobs all finish with every document; jobs take turns
 * (round-robin) rather than running in arrival order; a job that would overflow
 * INGEST_QUEUE_MAX is OVERLOADED naming it; get_system_health reports the knowledge base; a store
 * that cannot open leaves the server up and answers STORAGE_UNAVAILABLE.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { serve, startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';
import { buildTestApp, testConfig } from '../helper.ts';

t.test('20 jobs at once all finish', async (t) => {
  const { kb, server } = await startKb(t);
  for (let i = 0; i < 60; i++) serve(server, `/doc-${i}.txt`, TEXT_DOC(`word${i}x`), 'text/plain');
  kb.createCollection('many');
  const started = performance.now();
  const jobs = await Promise.all(
    Array.from({ length: 20 }, (_, j) => kb.addDocuments('many', { urls: [0, 1, 2].map((k) => `${server.origin}/doc-${j * 3 + k}.txt`) })),
  );
  const ended = await Promise.all(jobs.map((j) => waitEnded(kb, j, 120_000)));
  const ms = performance.now() - started;
  t.ok(ended.every((j) => j.status === 'succeeded'), ended.map((j) => j.status).join(','));
  t.equal(kb.getCollection('many').stats.documents, 60);
  t.equal(kb.listJobs({ collection: 'many', limit: 100 }).total, 20);
  t.comment(`60 small text documents in 20 jobs: ${Math.round(ms)} ms (${(60 / (ms / 1000)).toFixed(1)} documents/s, INGEST_CONCURRENCY 2)`);
  const stats = kb.stats();
  t.match(stats, { available: true, collections: 1, documents: 60, documents_queued: 0, documents_running: 0, ingest_queue_max: 1000 });
});

t.test('jobs take turns; OVERLOADED past INGEST_QUEUE_MAX', async (t) => {
  const { kb, server } = await startKb(t, { INGEST_CONCURRENCY: '1', INGEST_QUEUE_MAX: '6' });
  const order: string[] = [];
  for (const name of ['a0', 'a1', 'a2', 'b0', 'b1']) {
    server.route(`/${name}.txt`, (_q, res) => {
      order.push(name);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(TEXT_DOC(name));
    });
  }
  kb.createCollection('turns');
  const a = await kb.addDocuments('turns', { urls: ['a0', 'a1', 'a2'].map((n) => `${server.origin}/${n}.txt`) });
  const b = await kb.addDocuments('turns', { urls: ['b0', 'b1'].map((n) => `${server.origin}/${n}.txt`) });
  // a0 started at once; 4 wait: 2 more fit, 3 do not.
  await t.rejects(kb.addDocuments('turns', { urls: ['x', 'y', 'z'].map((n) => `${server.origin}/${n}.txt`) }), { code: 'OVERLOADED', message: /INGEST_QUEUE_MAX \(6\)/ });
  await Promise.all([waitEnded(kb, a), waitEnded(kb, b)]);
  t.same(order, ['a0', 'b0', 'a1', 'b1', 'a2'], 'round-robin between jobs');
});

t.test('health reports the knowledge base', async (t) => {
  const app = await buildTestApp(t);
  const body = (await app.inject({ url: '/v1/system/health' })).json();
  t.match(body.features.knowledge_base, { available: true, collections: 0, ingest_queue_max: 1000, ingest_concurrency: 2 });
});

t.test('a store that cannot open: the server starts, kb calls are STORAGE_UNAVAILABLE', async (t) => {
  const config = testConfig(t);
  fs.mkdirSync(config.dataDir, { recursive: true });
  fs.writeFileSync(path.join(config.dataDir, 'kb'), 'not a folder');
  const app = await buildTestApp(t, { config });
  const kb = app.services.kb;
  t.throws(() => kb.listCollections(), { code: 'STORAGE_UNAVAILABLE' });
  await t.rejects(kb.addDocuments('x', { urls: ['https://example.com/a.txt'] }), { code: 'STORAGE_UNAVAILABLE' });
  const body = (await app.inject({ url: '/v1/system/health' })).json();
  t.match(body.features.knowledge_base, { available: false, reason: /knowledge base/ });
});
