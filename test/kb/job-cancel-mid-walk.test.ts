/**
 * A job cancelled while a part of its folder walk is still being read and a document still runs
 * ends once both have stopped, whichever stops last (src/kb/job-runner.ts). Before, a document
 * that ended first saw the walk in flight and left the end to it, and the walk, finding the job
 * cancelled, returned without ending it: the job stayed `running` for good.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { newFeed, type FeedNext } from '../../src/kb/folder-feed.ts';
import { JobRunner } from '../../src/kb/job-runner.ts';
import { KbStore } from '../../src/kb/kb-store.ts';
import type { ItemResult } from '../../src/kb/document-executor.ts';
import { pollUntil } from '../poll.ts';

/** A promise and the function that settles it. */
function gate<T>(): { promise: Promise<T>; open: (v: T) => void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

for (const last of ['the walk', 'the document'] as const) {
  t.test(`cancelled mid-walk with a document running: the job ends when ${last} stops last`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'job-cancel-walk-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const store = new KbStore(path.join(dir, 'kb'));
    t.teardown(() => store.close());
    store.createCollection('c', null);

    const doc = gate<ItemResult>();
    const walk = gate<void>();
    let documentStarted = false;
    let walkStarted = false;
    // Neither heeds the abort at once: a document finishing its step, a walk inside a slow readdir.
    const feed: FeedNext = async (state) => {
      walkStarted = true;
      await walk.promise;
      return { items: [], state: { ...state, state: 'complete' } };
    };
    const runner = new JobRunner({
      store,
      spoolDir: path.join(dir, 'spool'),
      concurrency: 1,
      queueMax: 100,
      documentTimeoutS: 600,
      feed,
      runItem: async () => {
        documentStarted = true;
        return doc.promise;
      },
    });
    t.teardown(() => runner.close());

    const job = await runner.submit('c', [{ source: 'https://example.invalid/a.txt', source_kind: 'url' }], { force: false }, newFeed([{ path: dir, id: '1:1' }], []));
    await pollUntil(() => documentStarted && walkStarted, 'the document running and a part of the walk under way');
    runner.cancel(job.id);
    t.equal(runner.liveJob(job.id)?.status, 'running', 'still running: a document and a walk have not stopped');

    if (last === 'the walk') {
      doc.open({ stage: 'done', documentId: 'doc_a', note: null });
      await pollUntil(() => runner.running() === 0, 'the document to stop');
      t.ok(runner.liveJob(job.id), 'the walk is still in flight: not ended yet');
      walk.open();
    } else {
      walk.open();
      await new Promise((r) => setImmediate(r));
      t.ok(runner.liveJob(job.id), 'the document still runs: not ended yet');
      doc.open({ stage: 'done', documentId: 'doc_a', note: null });
    }
    const ended = await runner.waitFor(job.id, 60_000);
    t.equal(ended.status, 'cancelled', 'the job ended, cancelled');
    t.equal(runner.liveJob(job.id), null, 'no longer live');
    t.equal(ended.enumeration?.state, 'stopped', 'its walk stopped');
  });
}
