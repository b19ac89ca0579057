/**
 * The goal check of issue 22 (folders of any size): a folder of 10,000 small files ingested in one
 * call with the default INGEST_QUEUE_MAX (1,000). The documents waiting never pass the bound; every
 * file ends up in the collection, once. In the scale suite, not `npm test`: 2-2.5 minutes on a
 * loaded two-core machine (112 s and 139 s measured, 72-90 documents/s). The search is a default
 * one: a one-word query whose word a single note holds is 'low', so its note comes back.
 */
import path from 'node:path';
import t from 'tap';
import { kbHealth, makeFolder, pollJobEnd, startFolderApp, wordOf } from '../kb/folder-any-size-fixtures.ts';

const FILES = 10_000;

t.test('10,000 small files in one call', async (t) => {
  const { app, base } = await startFolderApp(t, {});
  const root = path.join(base, 'ten-thousand');
  const files = makeFolder(root, FILES);
  const t0 = performance.now();
  const res = await app.inject({ method: 'POST', url: '/v1/collections/tenk/documents', payload: { paths: [root] } });
  t.equal(res.statusCode, 202, res.body.slice(0, 300));
  let maxWaiting = 0;
  const job = await pollJobEnd(app, res.json().id, (kb) => (maxWaiting = Math.max(maxWaiting, kb.documents_queued)), 900_000, 2_000);
  const s = (performance.now() - t0) / 1000;
  const health = await kbHealth(app);
  t.comment(`${FILES} files in ${s.toFixed(1)} s (${(FILES / s).toFixed(0)} documents/s); most waiting: ${maxWaiting} polled, peak ${health.documents_queued_peak}`);
  t.equal(job.status, 'succeeded');
  t.match(job, { counts: { total: FILES, done: FILES }, enumeration: { state: 'complete', files_found: FILES } });
  t.ok(health.documents_queued_peak <= health.ingest_queue_max, 'the documents waiting stayed within INGEST_QUEUE_MAX');
  t.equal(new Set(job.items.map((i: any) => i.source)).size, FILES, 'each file once');
  t.equal((await app.inject({ url: '/v1/collections/tenk' })).json().stats.documents, FILES);
  const r = (await app.inject({ method: 'POST', url: '/v1/collections/tenk/search', payload: { query: wordOf(9_876), top_k: 1 } })).json();
  t.equal(r.confidence, 'low', `search for file 9876's word: ${r.message}`);
  t.equal(r.results[0]?.source, files[9_876], 'a late file is searchable');
});
