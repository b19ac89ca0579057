/**
 * Retries behave the same in process as with Redis (document-executor.ts): a transient failure
 * (the origin answering 503 past the downloader's own tries) is tried again after a backoff and
 * the document lands; a failure the document causes (404) is not tried again. Requests are
 * counted at a loopback origin.
 */
import t from 'tap';
import { startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';

// The downloader tries a URL 3 times itself (download.ts's default maxAttempts).
const DOWNLOADER_TRIES = 3;

t.test('a transient failure is retried in process; a 404 is not', async (t) => {
  const { kb, server } = await startKb(t);
  let flaky = 0;
  server.route('/flaky.txt', (_q, res) => {
    flaky++;
    if (flaky <= DOWNLOADER_TRIES) {
      res.writeHead(503);
      res.end('busy');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(TEXT_DOC('quokka'));
  });
  let missing = 0;
  server.route('/missing.txt', (_q, res) => {
    missing++;
    res.writeHead(404);
    res.end('no');
  });
  const events: string[] = [];
  const job = await kb.addDocuments('retry', { urls: [`${server.origin}/flaky.txt`, `${server.origin}/missing.txt`], create: true });
  const off = kb.subscribe(job.id, (e) => events.push(e.message ?? ''));
  const done = await waitEnded(kb, job, 90_000);
  off();
  t.equal(done.status, 'partial', JSON.stringify(done.items));
  t.equal(done.items[0]!.stage, 'done', 'the flaky document landed on the job-level retry');
  t.equal(flaky, DOWNLOADER_TRIES + 1, 'one more request after the downloader gave up: the job retried once');
  t.match(done.items[0]!.note, /try 1 of 3 failed \(DOWNLOAD_ERROR/);
  t.ok(events.some((m) => /retrying after DOWNLOAD_ERROR/.test(m)), 'a retry event was sent');
  t.equal(done.items[1]!.stage, 'failed');
  t.equal(done.items[1]!.error?.code, 'DOWNLOAD_ERROR');
  t.equal(missing, 1, 'a 404 is the document\'s own failure: no retry');
  const r = await kb.search('retry', { query: 'quokka' }, { signal: AbortSignal.timeout(30_000) });
  t.ok(r.results.length > 0, 'the retried document is searchable');
});
