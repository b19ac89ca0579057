/**
 * Folders of any size (issue 22): a folder of more files than INGEST_QUEUE_MAX is one job. The
 * folder is walked in parts as the job drains, so the documents waiting never pass the bound;
 * the job's answer says how far the walk is (enumeration, counts.total growing); what the walk
 * leaves out (a symlink outside, a dangling one) is still reported as skipped items; files named
 * explicitly past INGEST_QUEUE_MAX are still refused; cancelling stops the walk.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helper.ts';
import { getJob, kbHealth, makeFolder, pollJobEnd, startFolderApp, wordOf } from './folder-any-size-fixtures.ts';

const QUEUE_MAX = 50;

t.test('600 files with INGEST_QUEUE_MAX 50: one job, every file in, never more than 50 waiting', async (t) => {
  const { app, base } = await startFolderApp(t, { INGEST_QUEUE_MAX: String(QUEUE_MAX) });
  const outside = fs.realpathSync(tempDir(t, 'kb-outside-'));
  const root = path.join(base, 'big');
  const files = makeFolder(root, 600, { links: outside });

  const res = await app.inject({ method: 'POST', url: '/v1/collections/big/documents', payload: { paths: [root] } });
  t.equal(res.statusCode, 202, res.body.slice(0, 300));
  const first = res.json();
  t.match(first.enumeration, { state: 'walking' }, 'the answer says the folder is still being walked');
  t.notOk('feed' in first, "the walk's server-side state is not in the answer");
  t.ok(first.counts.total > 0 && first.counts.total <= QUEUE_MAX, `the first part fits the queue (${first.counts.total} items)`);

  let maxWaiting = 0;
  let totals: number[] = [];
  const ended = await pollJobEnd(app, first.id, (kb, job) => {
    maxWaiting = Math.max(maxWaiting, kb.documents_queued);
    totals.push(job.counts.total);
  });
  totals = [...new Set(totals)];
  const health = await kbHealth(app);
  t.comment(`most documents waiting: ${maxWaiting} polled, ${health.documents_queued_peak} peak; totals seen: ${totals.length} distinct`);
  t.ok(maxWaiting <= QUEUE_MAX, `documents waiting never passed INGEST_QUEUE_MAX (polled max ${maxWaiting})`);
  t.ok(health.documents_queued_peak <= QUEUE_MAX, `the queue's own peak stayed within it (${health.documents_queued_peak})`);
  t.ok(totals.length > 2, 'counts.total grew as the walk went on');
  t.ok(totals.every((n, i) => i === 0 || n >= totals[i - 1]!), 'counts.total never shrank');

  t.equal(ended.status, 'succeeded', JSON.stringify(ended.items.filter((i: any) => i.error).slice(0, 3)));
  t.same(ended.enumeration, { state: 'complete', files_found: 600 });
  t.equal(ended.counts.total, 602, '600 files and 2 skipped links');
  t.equal(ended.counts.done, 600);
  t.equal(ended.counts.skipped, 2);
  const sources = ended.items.filter((i: any) => i.stage === 'done').map((i: any) => i.source);
  t.equal(new Set(sources).size, 600, 'each file once');
  t.same([...sources].sort(), [...files].sort(), 'exactly the files of the folder');
  const notes = ended.items.filter((i: any) => i.stage === 'skipped');
  t.same(notes.map((i: any) => path.relative(root, i.source)).sort(), [path.join('a', 'escape.txt'), path.join('c', 'dangling.txt')], 'the links left out are skipped items');
  t.notMatch(JSON.stringify(ended), outside, 'no item says where a link points');

  const collection = (await app.inject({ url: '/v1/collections/big' })).json();
  t.equal(collection.stats.documents, 600, 'all 600 documents in the collection');
  for (const i of [0, 137, 299, 450, 599]) {
    const r = (await app.inject({ method: 'POST', url: '/v1/collections/big/search', payload: { query: wordOf(i), top_k: 1 } })).json();
    t.equal(r.results[0]?.source, files[i], `file ${i} is searchable`);
  }
  t.equal(health.folders_walking, 0, 'no walk left running');

  // Ingesting the same folder again: every file unchanged, skipped; the walk is the same.
  const again = await app.inject({ method: 'POST', url: '/v1/collections/big/documents', payload: { paths: [root] } });
  t.equal(again.statusCode, 202);
  const second = await pollJobEnd(app, again.json().id);
  t.equal(second.status, 'succeeded');
  t.match(second.counts, { total: 602, done: 0, skipped: 602 }, 'unchanged files are skipped, none ingested twice');
});

t.test('files named one by one past INGEST_QUEUE_MAX are still refused; a folder of them is not', async (t) => {
  const { app, base } = await startFolderApp(t, { INGEST_QUEUE_MAX: '20' });
  const root = path.join(base, 'named');
  const files = makeFolder(root, 30);
  const named = await app.inject({ method: 'POST', url: '/v1/collections/named/documents', payload: { paths: files } });
  t.equal(named.statusCode, 400, named.body.slice(0, 300));
  t.match(named.json(), { code: 'VALIDATION_ERROR', error: /30 documents.*INGEST_QUEUE_MAX 20/ });
  const folder = await app.inject({ method: 'POST', url: '/v1/collections/named/documents', payload: { paths: [root] } });
  t.equal(folder.statusCode, 202, folder.body.slice(0, 300));
  const ended = await pollJobEnd(app, folder.json().id);
  t.match(ended, { status: 'succeeded', counts: { total: 30, done: 30 }, enumeration: { state: 'complete', files_found: 30 } });

  // A file named beside its folder is one item, not two.
  const both = await app.inject({ method: 'POST', url: '/v1/collections/named/documents', payload: { paths: [files[3], root] } });
  const bothEnded = await pollJobEnd(app, both.json().id);
  t.equal(bothEnded.counts.total, 30, 'the named file is not walked again');
});

t.test('cancelling a job stops the walk of its folder', async (t) => {
  const { app, base } = await startFolderApp(t, { INGEST_QUEUE_MAX: '10', INGEST_CONCURRENCY: '1' });
  const root = path.join(base, 'cancel');
  makeFolder(root, 400);
  const res = await app.inject({ method: 'POST', url: '/v1/collections/stop/documents', payload: { paths: [root] } });
  t.equal(res.statusCode, 202, res.body.slice(0, 300));
  const id = res.json().id;
  // Cancelled once the walk has taken a few parts.
  let job = await getJob(app, id);
  while (job.status === 'queued' || (job.status === 'running' && job.enumeration.files_found < 20)) {
    await new Promise((r) => setTimeout(r, 20));
    job = await getJob(app, id);
  }
  t.equal(job.status, 'running', 'still running when cancelled');
  const cancel = await app.inject({ method: 'POST', url: `/v1/jobs/${id}/cancel` });
  t.equal(cancel.statusCode, 200, cancel.body.slice(0, 300));
  const ended = await pollJobEnd(app, id);
  t.equal(ended.status, 'cancelled');
  t.equal(ended.enumeration.state, 'stopped', 'the walk is stopped');
  t.ok(ended.counts.total < 400, `the walk went no further (${ended.counts.total} of 400 files found)`);

  // Another job through the same queue ends: whatever the cancelled walk had under way is done by then.
  const other = path.join(base, 'other');
  makeFolder(other, 4);
  const next = await app.inject({ method: 'POST', url: '/v1/collections/stop/documents', payload: { paths: [other], wait_seconds: 60 } });
  await pollJobEnd(app, next.json().id);
  const after = await getJob(app, id);
  t.equal(after.counts.total, ended.counts.total, 'no items were added after the cancel');
  t.equal(after.enumeration.state, 'stopped');
  t.equal((await kbHealth(app)).folders_walking, 0);
});
