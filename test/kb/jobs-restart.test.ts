/**
 * kill -9 during an ingestion job, then a restart on the same DATA_DIR: the job is resumed (its
 * finished document is not redone, the interrupted one and the queued upload are) and ends
 * succeeded with resumed = 1, every document whole and searchable. When the spooled upload is
 * gone, that document fails with the reason and the rest still finish.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { tempDir } from '../helper.ts';
import { startLocalServer, type LocalServer } from '../documents/fixtures/local-server.ts';
import { serve, startKb, TEXT_DOC } from './jobs-fixtures.ts';
import { LOST_UPLOAD_REASON } from '../../src/kb/job-runner.ts';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';

const CHILD = path.join(import.meta.dirname, 'jobs-restart-child.ts');

/** Runs the child until the first document is done and the second one's download stalls, then kills it. */
async function killMidJob(t: Test, dataDir: string, server: LocalServer): Promise<string> {
  const child = spawn(process.execPath, [...SOURCE_LOADER_ARGS, CHILD, dataDir, server.origin], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  child.stdout.on('data', (d) => (out += d));
  const jobId = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /job (job_\w+)/.exec(out);
      if (m && out.includes('item 0 done') && out.includes('item 1 downloading') && server.hits.get('/stall.txt')) {
        clearInterval(timer);
        resolve(m[1]!);
      }
    }, 20);
    child.on('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`child exited early (${code}): ${err}`));
    });
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  return jobId;
}

function routes(server: LocalServer, stall: { on: boolean }) {
  serve(server, '/first.txt', TEXT_DOC('beluga'), 'text/plain');
  server.route('/stall.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    if (stall.on) res.write('partial ');
    else res.end(TEXT_DOC('orca'));
  });
}

t.test('a job killed mid-way is resumed after a restart and finishes', async (t) => {
  const dataDir = tempDir(t);
  const server = await startLocalServer();
  t.teardown(() => server.close());
  const stall = { on: true };
  routes(server, stall);
  const t0 = Date.now();
  const jobId = await killMidJob(t, dataDir, server);
  t.comment(`killed after ${Date.now() - t0} ms`);
  t.ok(fs.existsSync(path.join(dataDir, 'kb', 'uploads', jobId, '2')), 'the upload is spooled on disk');

  stall.on = false;
  // Searches below wait for the index however long a loaded machine takes to open it (the default
  // SEARCH_LOAD_WAIT_MS answers INDEX_LOADING after 3 s; that bound is tested in ready-route).
  const { kb } = await startKb(t, { DATA_DIR: dataDir, SEARCH_LOAD_WAIT_MS: '120000' }, {}, server);
  const t1 = Date.now();
  const job = await kb.waitForJob(jobId, 60_000);
  t.comment(`resumed job ended after ${Date.now() - t1} ms`);
  t.equal(job.status, 'succeeded', JSON.stringify(job.items.map((i) => i.error)));
  t.equal(job.resumed, 1);
  t.same(job.items.map((i) => i.stage), ['done', 'done', 'done']);
  t.equal(server.hits.get('/first.txt'), 1, 'the document done before the kill is not fetched again');
  const docs = kb.listDocuments('restart', {});
  t.equal(docs.total, 3);
  for (const d of docs.items) {
    t.equal(d.status, 'ready', `${d.source} ready`);
    t.equal(d.revision, 1, `${d.source}: one committed version`);
    t.equal(kb.documentChunks('restart', d.id, { limit: 500 }).items.length, d.chunk_count, `${d.source}: its chunks are all there`);
  }
  for (const word of ['beluga', 'orca', 'narwhal']) {
    const r = await kb.search('restart', { query: word }, { signal: AbortSignal.timeout(30_000) });
    t.ok(r.results[0]?.text.includes(word), `${word} found after the restart`);
  }
  for (let i = 0; i < 100 && fs.existsSync(path.join(dataDir, 'kb', 'uploads', jobId)); i++) await new Promise((r) => setTimeout(r, 20));
  t.notOk(fs.existsSync(path.join(dataDir, 'kb', 'uploads', jobId)), 'the spool went with the job');
});

t.test('a lost upload fails that document with the reason; the rest finish', async (t) => {
  const dataDir = tempDir(t);
  const server = await startLocalServer();
  t.teardown(() => server.close());
  const stall = { on: true };
  routes(server, stall);
  const jobId = await killMidJob(t, dataDir, server);
  fs.rmSync(path.join(dataDir, 'kb', 'uploads', jobId, '2'));

  stall.on = false;
  const { kb } = await startKb(t, { DATA_DIR: dataDir }, {}, server);
  const job = await kb.waitForJob(jobId, 60_000);
  t.equal(job.status, 'partial');
  t.equal(job.reason, LOST_UPLOAD_REASON);
  t.same(job.items.map((i) => i.stage), ['done', 'done', 'failed']);
  t.equal(job.items[2]!.error?.message, LOST_UPLOAD_REASON);
});
