/**
 * Cancelling a job: its queued documents become cancelled, the running one is aborted (a download
 * that stalls stops), the job ends 'cancelled' with a reason, and cancelling it again is CONFLICT.
 * Deleting a collection cancels its jobs first. A per-document timeout fails that document only.
 */
import t from 'tap';
import { serve, startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';
import type { JobEvent } from '../../src/kb/types.ts';

const until = async (cond: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

t.test('cancel: queued items cancelled, the running download aborted, CONFLICT afterwards', async (t) => {
  const { kb, server } = await startKb(t, { INGEST_CONCURRENCY: '1' });
  let closedByClient = false;
  server.route('/stall.txt', (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('partial ');
    req.socket.on('close', () => (closedByClient = true));
  });
  serve(server, '/later.txt', TEXT_DOC('later'), 'text/plain');
  const job = await kb.addDocuments('c', { urls: [`${server.origin}/stall.txt`, `${server.origin}/later.txt`], create: true });
  const events: JobEvent[] = [];
  kb.subscribe(job.id, (e) => events.push(e));
  await until(() => server.hits.get('/stall.txt') === 1);
  t.equal(kb.getJob(job.id).status, 'running');
  t.equal(kb.getJob(job.id).items[0]!.stage, 'downloading');

  const cancelled = await kb.cancelJob(job.id);
  t.equal(cancelled.items[1]!.stage, 'cancelled', 'the queued item is cancelled at once');
  const ended = await waitEnded(kb, job, 20_000);
  t.equal(ended.status, 'cancelled');
  t.equal(ended.reason, 'cancelled by request');
  t.same(ended.items.map((i) => i.stage), ['cancelled', 'cancelled']);
  t.same(ended.counts, { total: 2, done: 0, skipped: 0, failed: 0, cancelled: 2 });
  await until(() => closedByClient);
  t.pass('the stalled download was aborted');
  t.equal(server.hits.get('/later.txt'), undefined, 'the queued document was never fetched');
  t.equal(events.at(-1)?.type, 'job');
  t.equal(events.at(-1)?.job?.status, 'cancelled');
  t.equal(kb.listDocuments('c', {}).total, 0, 'a new document cancelled mid-way leaves no row');
  t.throws(() => kb.cancelJob(job.id), { code: 'CONFLICT' });
  t.equal(kb.getJob(job.id).status, 'cancelled', 'stored');

  // An ended job: one final event for a late subscriber; waitForJob returns it at once.
  const late: JobEvent[] = [];
  kb.subscribe(job.id, (e) => late.push(e));
  await until(() => late.length === 1);
  t.equal(late[0]!.type, 'job');
  t.equal((await kb.waitForJob(job.id, 10_000)).status, 'cancelled');
});

t.test('deleting a collection cancels its running job', async (t) => {
  const { kb, server } = await startKb(t, { INGEST_CONCURRENCY: '1' });
  server.route('/stall.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('partial ');
  });
  const job = await kb.addDocuments('d', { urls: [`${server.origin}/stall.txt`], create: true });
  await until(() => server.hits.get('/stall.txt') === 1);
  const removed = await kb.deleteCollection('d');
  t.equal(removed.name, 'd');
  t.throws(() => kb.getCollection('d'), { code: 'NOT_FOUND' });
  t.throws(() => kb.getJob(job.id), { code: 'NOT_FOUND' }, 'its jobs went with it');
});

t.test('a document over INGEST_DOCUMENT_TIMEOUT fails alone with TIMEOUT', async (t) => {
  const { kb, server, services } = await startKb(t, { INGEST_DOCUMENT_TIMEOUT: '2' });
  server.route('/stall.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('partial ');
  });
  serve(server, '/ok.txt', TEXT_DOC('timely'), 'text/plain');
  // Warm up (first download and language detection load code) outside the timed job.
  await services.documents.load({ upload: { bytes: Buffer.from(TEXT_DOC('warm')), filename: 'w.txt' } }, { signal: AbortSignal.timeout(60_000) });
  const done = await waitEnded(kb, await kb.addDocuments('e', { urls: [`${server.origin}/stall.txt`, `${server.origin}/ok.txt`], create: true }));
  t.equal(done.status, 'partial');
  t.equal(done.items[0]!.error?.code, 'TIMEOUT');
  t.match(done.items[0]!.error?.message, /INGEST_DOCUMENT_TIMEOUT/);
  t.equal(done.items[1]!.stage, 'done');
});
