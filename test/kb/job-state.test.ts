/**
 * The job state machine (job-state.ts) on its own: every item and job transition in the tables,
 * the moves both queues make (start, progress, retry, end, cancel, fail), counts, fractions and
 * end conditions (succeeded, partial, failed, cancelled).
 */
import t from 'tap';
import {
  applyProgress,
  canMoveItem,
  canMoveJob,
  cancelItems,
  countsOf,
  endIfDone,
  endItem,
  failUnfinished,
  finishJob,
  ITEM_TRANSITIONS,
  JOB_TRANSITIONS,
  newJobRecord,
  requeueItem,
  startItem,
  TERMINAL_STAGES,
} from '../../src/kb/job-state.ts';
import { jobFraction } from '../../src/contract/job-progress.ts';
import type { ItemStage, JobStatus } from '../../src/kb/types.ts';

const STAGES: ItemStage[] = ['queued', 'downloading', 'extracting', 'chunking', 'embedding', 'indexing', 'done', 'skipped', 'failed', 'cancelled'];
const STATUSES: JobStatus[] = ['queued', 'running', 'succeeded', 'partial', 'failed', 'cancelled'];
const job3 = () => newJobRecord('c', [0, 1, 2].map((i) => ({ source: `https://x.test/${i}`, source_kind: 'url' as const })));

t.test('the transition tables: ended stages and statuses are final, every unfinished stage can fail, cancel or go back', async (t) => {
  for (const from of STAGES) {
    for (const to of STAGES) {
      const allowed = canMoveItem(from, to);
      if (TERMINAL_STAGES.has(from)) t.notOk(allowed, `${from} -> ${to} refused (ended)`);
      else if (to === 'failed' || to === 'cancelled' || to === 'skipped') t.ok(allowed, `${from} -> ${to}`);
      else if (to === 'queued') t.equal(allowed, from !== 'queued', `${from} -> queued`);
      else t.equal(allowed, ITEM_TRANSITIONS[from].has(to));
    }
  }
  t.ok(canMoveItem('queued', 'downloading') && !canMoveItem('queued', 'done') && !canMoveItem('embedding', 'extracting'));
  for (const from of STATUSES) for (const to of STATUSES) t.equal(canMoveJob(from, to), JOB_TRANSITIONS[from].has(to), `${from} -> ${to}`);
  t.ok(canMoveJob('queued', 'running') && canMoveJob('running', 'partial') && !canMoveJob('succeeded', 'running') && !canMoveJob('running', 'queued'));
});

t.test('start, progress, retry, end: counts and fractions follow', async (t) => {
  const job = job3();
  t.same(job.counts, { total: 3, done: 0, skipped: 0, failed: 0, cancelled: 0 });
  t.equal(job.status, 'queued');
  t.equal(jobFraction(job), 0);
  const [a, b, c] = job.items as [typeof job.items[0], typeof job.items[0], typeof job.items[0]];
  startItem(job, a);
  t.equal(job.status, 'running');
  t.ok(job.started_at && a.started_at);
  t.equal(a.stage, 'downloading');
  t.equal(applyProgress(a, 'downloading', {}, 'doc1'), false, 'same stage: no change');
  t.equal(applyProgress(a, 'embedding', { chunks_total: 10, chunks_embedded: 5 }, 'doc1'), true);
  t.equal(a.document_id, 'doc1');
  t.ok(Math.abs(jobFraction(job) - (0.6 + 0.35 * 0.5) / 3) < 1e-9, 'the contract formula');
  t.equal(applyProgress(a, 'done', {}, null), false, 'an end comes through endItem, not progress');
  requeueItem(a, 'try 1 of 3 failed (DOWNLOAD_ERROR: HTTP 503); retrying');
  t.equal(a.stage, 'queued');
  t.same(a.progress, { pages_done: null, pages_total: null, chunks_embedded: null, chunks_total: null });
  startItem(job, a);
  t.ok(endItem(a, { stage: 'done', document_id: 'doc1', note: 'unchanged', error: null }));
  t.equal(a.note, 'try 1 of 3 failed (DOWNLOAD_ERROR: HTTP 503); retrying; unchanged', 'the retry note stays beside the result');
  t.notOk(endItem(a, { stage: 'failed', document_id: null, note: null, error: { code: 'X', message: 'y' } }), 'an ended item does not move');
  t.equal(applyProgress(a, 'embedding', {}, null), false, 'no progress after the end');
  startItem(job, b);
  endItem(b, { stage: 'failed', document_id: null, note: null, error: { code: 'UNSUPPORTED_FORMAT', message: 'no' } });
  t.notOk(endIfDone(job, false), 'one item still queued: not ended');
  t.equal(job.status, 'running');
  endItem(c, { stage: 'skipped', document_id: 'doc3', note: null, error: null });
  t.ok(endIfDone(job, false));
  t.equal(job.status, 'partial');
  t.same(job.counts, { total: 3, done: 1, skipped: 1, failed: 1, cancelled: 0 });
  t.ok(job.finished_at);
  t.notOk(endIfDone(job, false), 'ends once');
  t.equal(jobFraction(job), 1);
});

t.test('end conditions: succeeded, failed (with its reason), cancelled, storage reason', async (t) => {
  const ok = job3();
  for (const i of ok.items) endItem(i, { stage: 'done', document_id: 'd', note: null, error: null });
  t.ok(endIfDone(ok, false));
  t.equal(ok.status, 'succeeded');

  const bad = job3();
  failUnfinished(bad, { code: 'QUEUE_UNAVAILABLE', message: 'redis away' });
  t.same(bad.counts.failed, 3);
  t.ok(endIfDone(bad, false));
  t.equal(bad.status, 'failed');
  t.equal(bad.reason, 'every document failed');

  const one = newJobRecord('c', [{ source: 'a', source_kind: 'url' }]);
  failUnfinished(one, { code: 'DOWNLOAD_ERROR', message: 'x' });
  finishJob(one, false);
  t.equal(one.reason, 'its document failed');

  const disk = job3();
  endItem(disk.items[0]!, { stage: 'done', document_id: 'd', note: null, error: null });
  failUnfinished(disk, { code: 'STORAGE_UNAVAILABLE', message: 'ENOSPC' });
  finishJob(disk, false);
  t.equal(disk.status, 'partial');
  t.match(disk.reason, /^storage unavailable: 2 of 3 documents could not be saved \(ENOSPC\)/);

  const cancelled = job3();
  startItem(cancelled, cancelled.items[0]!);
  t.equal(cancelItems(cancelled, 'queued'), 2, 'only the waiting ones');
  t.notOk(endIfDone(cancelled, true), 'the running one has not stopped');
  endItem(cancelled.items[0]!, { stage: 'cancelled', document_id: null, note: null, error: null });
  t.ok(endIfDone(cancelled, true));
  t.equal(cancelled.status, 'cancelled');
  t.same(countsOf(cancelled.items), { total: 3, done: 0, skipped: 0, failed: 0, cancelled: 3 });

  const all = job3();
  startItem(all, all.items[1]!);
  t.equal(cancelItems(all, 'unfinished'), 3);
});
