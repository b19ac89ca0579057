/**
 * Jobs in the store: a record round-trips (items and counts as JSON), saveJob rewrites it,
 * listJobs pages newest first with filters, unfinishedJobs finds the queued and running ones
 * after a reopen, and a duplicate id is CONFLICT.
 */
import t from 'tap';
import path from 'node:path';
import { KbStore } from '../../src/kb/kb-store.ts';
import { newJobId } from '../../src/kb/kb-store.ts';
import type { JobRecord, JobStatus } from '../../src/kb/types.ts';
import { tempDir } from './fixtures/store-data.ts';

function job(n: number, collection: string, status: JobStatus): JobRecord {
  return {
    id: `job_${String(n).padStart(12, '0')}`,
    collection,
    status,
    reason: null,
    items: [
      {
        index: 0,
        source: `https://h/${n}`,
        source_kind: 'url',
        stage: 'queued',
        document_id: null,
        note: null,
        error: null,
        progress: { pages_done: null, pages_total: null, chunks_embedded: null, chunks_total: null },
        started_at: null,
        finished_at: null,
      },
    ],
    counts: { total: 1, done: 0, skipped: 0, failed: 0, cancelled: 0 },
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    started_at: null,
    finished_at: null,
    resumed: 0,
  };
}

t.test('jobs round-trip, update, list, unfinished after reopen', async (t) => {
  const dir = path.join(tempDir(t), 'kb');
  const store = new KbStore(dir);
  t.match(newJobId(), /^job_[0-9a-f]{12}$/);
  const jobs = [job(1, 'a', 'queued'), job(2, 'a', 'running'), job(3, 'b', 'succeeded'), job(4, 'a', 'failed'), job(5, 'b', 'queued')];
  for (const j of jobs) store.createJob(j);
  t.throws(() => store.createJob(jobs[0]!), { code: 'CONFLICT' });
  t.same(store.getJob(jobs[1]!.id), jobs[1]);
  // The API's fields in column order; the owner, cancel flag and walk state stay internal.
  t.same(Object.keys(store.getJob(jobs[1]!.id)!), Object.keys(jobs[1]!));
  t.equal(store.getJob('job_nope'), null);

  const updated: JobRecord = {
    ...jobs[1]!,
    status: 'partial',
    reason: 'one document failed',
    started_at: '2026-01-01T00:00:10.000Z',
    finished_at: '2026-01-01T00:01:10.000Z',
    counts: { total: 1, done: 0, skipped: 0, failed: 1, cancelled: 0 },
    items: [{ ...jobs[1]!.items[0]!, stage: 'failed', error: { code: 'DOWNLOAD_ERROR', message: '404' }, progress: { pages_done: 1, pages_total: 3, chunks_embedded: 0, chunks_total: 9 } }],
    resumed: 2,
  };
  store.saveJob(updated);
  t.same(store.getJob(updated.id), updated);
  store.saveJob({ ...job(99, 'a', 'running') }); // a row that is gone stays gone
  t.equal(store.getJob(job(99, 'a', 'running').id), null);

  const all = store.listJobs({});
  t.equal(all.total, 5);
  t.same(
    all.items.map((j) => j.id),
    [...jobs].reverse().map((j) => j.id),
    'newest first',
  );
  t.same(
    store.listJobs({ collection: 'a' }).items.map((j) => j.id),
    [jobs[3]!.id, jobs[1]!.id, jobs[0]!.id],
  );
  t.same(
    store.listJobs({ status: 'queued' }).items.map((j) => j.id),
    [jobs[4]!.id, jobs[0]!.id],
  );
  const page = store.listJobs({ limit: 2, offset: 2 });
  t.same(
    page.items.map((j) => j.id),
    [jobs[2]!.id, jobs[1]!.id],
  );
  t.equal(page.next_offset, 4);
  store.close();

  const again = new KbStore(dir);
  t.teardown(() => again.close());
  t.same(
    again.unfinishedJobs().map((j) => [j.id, j.status]),
    [
      [jobs[0]!.id, 'queued'],
      [jobs[4]!.id, 'queued'],
    ],
  );
  again.saveJob({ ...jobs[0]!, status: 'running' });
  t.same(
    again.unfinishedJobs().map((j) => j.id),
    [jobs[0]!.id, jobs[4]!.id],
  );
});
