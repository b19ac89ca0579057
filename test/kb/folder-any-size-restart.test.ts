/**
 * kill -9 while a job walks a folder larger than INGEST_QUEUE_MAX, then a restart on the same
 * DATA_DIR: the job resumes from the walk's recorded place and ends with every file of the
 * folder exactly once (none lost, none made an item twice), the whole folder in the collection.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helper.ts';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';
import { startKb } from './jobs-fixtures.ts';
import { makeFolder, wordOf } from './folder-any-size-fixtures.ts';

const CHILD = path.join(import.meta.dirname, 'folder-any-size-child.ts');
const FILES = 240;

t.test('a job killed mid-walk resumes after its last recorded file', async (t) => {
  const dataDir = tempDir(t);
  const base = fs.realpathSync(tempDir(t, 'kb-walk-'));
  const root = path.join(base, 'folder');
  const files = makeFolder(root, FILES);

  const child = spawn(process.execPath, [...SOURCE_LOADER_ARGS, CHILD, dataDir, base, root], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  // Killed once documents past the first few parts (INGEST_QUEUE_MAX 10: parts of at most 5) are done.
  const jobId = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = /job (job_\w+)/.exec(out);
      const done = [...out.matchAll(/item (\d+) done/g)].map((x) => Number(x[1]));
      if (m && done.some((i) => i >= 30)) {
        child.stdout.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`child exited early (${code}): ${err}`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const doneBefore = new Set([...out.matchAll(/item (\d+) done/g)].map((x) => Number(x[1]))).size;
  t.ok(doneBefore < FILES, `killed mid-job (${doneBefore} of ${FILES} documents done)`);

  const { kb } = await startKb(t, { DATA_DIR: dataDir, ALLOWED_DIRS: base, INGEST_QUEUE_MAX: '10' });
  const before = kb.getJob(jobId);
  t.equal(before.enumeration?.state, 'walking', 'the walk was not over when the process died');
  t.ok(before.counts.total < FILES, `the record held part of the folder (${before.counts.total} items)`);

  const job = await kb.waitForJob(jobId, 240_000);
  t.equal(job.status, 'succeeded', JSON.stringify(job.items.filter((i) => i.error).slice(0, 3)));
  t.ok(job.resumed >= 1, 'resumed after the restart');
  t.same(job.enumeration, { state: 'complete', files_found: FILES });
  const sources = job.items.map((i) => i.source);
  t.equal(sources.length, FILES, 'one item per file');
  t.equal(new Set(sources).size, FILES, 'no file made an item twice');
  t.same([...sources].sort(), [...files].sort(), 'no file lost');
  t.equal(job.counts.done + job.counts.skipped, FILES, 'each done, or skipped as unchanged when the kill lost its end');
  t.equal(kb.getCollection('walk').stats.documents, FILES);
  for (const i of [0, 119, 239]) {
    const r = await kb.search('walk', { query: wordOf(i), top_k: 1 }, { signal: AbortSignal.timeout(30_000) });
    t.equal(r.results[0]?.source, files[i], `file ${i} searchable`);
  }
});
