/**
 * One database file, several processes (replicas on a shared DATA_DIR): a process that closes
 * cleanly while another still has the file open does not mark it clean for both, so when the other
 * is then killed, the next open still runs quick_check; when every process closed, it does not.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { KbStore } from '../../src/kb/kb-store.ts';
import { tempDir } from '../helper.ts';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';

const FIXTURE = path.resolve(import.meta.dirname, 'fixtures/hold-store.ts');

async function holdOpen(t: { teardown(fn: () => void): void }, dir: string, jobCollection?: string) {
  const child = spawn(process.execPath, [...SOURCE_LOADER_ARGS, FIXTURE, dir, ...(jobCollection ? [jobCollection] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let err = '';
  let out = '';
  child.stderr.on('data', (d) => (err += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('open\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}): ${err}`)));
  });
  return Object.assign(child, { jobId: /job (\S+)/.exec(out)?.[1] ?? null });
}

t.test('another process killed after this one closed cleanly: the next open checks the file', async (t) => {
  const dir = path.join(tempDir(t, 'rag-kb-handles-'), 'kb');
  const first = new KbStore(dir);
  first.close();
  const held = await holdOpen(t, dir);
  const mine = new KbStore(dir);
  t.equal(mine.integrityChecked, false, 'a live process holding the file is not a crash');
  mine.close();
  held.kill('SIGKILL');
  await new Promise((r) => held.once('exit', r));
  const after = new KbStore(dir);
  t.equal(after.integrityChecked, true, 'its kill is found although this process closed cleanly meanwhile');
  after.close();
  const again = new KbStore(dir);
  t.equal(again.integrityChecked, false, 'once checked, and every process closed, the file is clean');
  t.same(again.listCollections().map((c) => c.name), ['held']);
  again.close();
});

t.test('two stores of one process on one file: each close leaves the other\'s handle, the last marks it clean', async (t) => {
  const dir = path.join(tempDir(t, 'rag-kb-handles-'), 'kb');
  const a = new KbStore(dir);
  const b = new KbStore(dir);
  t.equal(b.integrityChecked, false, "the other store's handle in this process is live, not dead");
  a.close();
  b.createCollection('still-open', null);
  b.close();
  const c = new KbStore(dir);
  t.equal(c.integrityChecked, false);
  c.close();
});

t.test('start-up resume claims only jobs whose process is gone, never those of a live process on the same file', async (t) => {
  const dir = path.join(tempDir(t, 'rag-kb-handles-'), 'kb');
  new KbStore(dir).close();
  const live = await holdOpen(t, dir, 'live-jobs');
  const dead = await holdOpen(t, dir, 'dead-jobs');
  dead.kill('SIGKILL');
  await new Promise((r) => dead.once('exit', r));
  const mine = new KbStore(dir);
  const claimed = mine.claimOrphanJobs().map((j) => j.id);
  t.same(claimed, [dead.jobId], "the killed process's job is claimed; the live one's is not");
  t.same(mine.claimOrphanJobs().map((j) => j.id), [dead.jobId], 'claimed again by the same process (it owns it now)');
  mine.close();
  live.kill('SIGTERM');
  await new Promise((r) => live.once('exit', r));
  const next = new KbStore(dir);
  t.same(next.claimOrphanJobs().map((j) => j.id).sort(), [dead.jobId, live.jobId].sort(), 'once both processes are gone, the next start takes both');
  next.close();
});
