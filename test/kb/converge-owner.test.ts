/**
 * Job ownership survives pid reuse (issue 19, item 6). A server killed with kill -9 leaves its
 * jobs `running`, owned by its open-handle row {host, pid, start, instance, beat}. When that pid
 * now belongs to another live process (or to this very process, as after a container restart),
 * the owner is still seen as gone: the process start time (/proc/<pid>/stat field 22) or the
 * per-start instance id differ. So the next start resumes the job, and cancelling such a job
 * while the server runs ends it `cancelled`, never "already ended (running)". A job whose owner
 * really is alive is left to it: cancelling stores the request for that process to act on.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { processStartTime } from '../../src/kb/db.ts';
import { KbStore } from '../../src/kb/kb-store.ts';
import { newJobRecord } from '../../src/kb/job-runner.ts';
import { buildTestApp, tempDir } from '../helper.ts';
import { startLocalServer, type LocalServer } from '../documents/fixtures/local-server.ts';
import { serve, startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';

/** Another live process on this host: its pid is running, its start time is its own. */
async function livePid(t: Test): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
  t.teardown(() => void child.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', reject);
  });
  return child.pid!;
}

/**
 * Writes what a killed server leaves behind: its handle row (fresh beat, so only the pid rule
 * can tell) and a running job of one URL owned by it.
 */
function plantJob(dataDir: string, url: string, owner: { pid: number; start: string | null; instance: string }): string {
  const dir = path.join(dataDir, 'kb');
  const store = new KbStore(dir);
  if (!store.getCollection('reuse')) store.createCollection('reuse', null);
  const job = newJobRecord('reuse', [{ source: url, source_kind: 'url' }]);
  job.status = 'running';
  job.started_at = new Date().toISOString();
  store.createJob(job);
  store.close();
  const db = new Database(path.join(dir, 'kb.sqlite'));
  const key = `open:planted${owner.instance}`;
  db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(
    key,
    JSON.stringify({ host: os.hostname(), pid: owner.pid, start: owner.start, instance: owner.instance, beat: Date.now() }),
  );
  db.prepare('UPDATE jobs SET owner = ? WHERE id = ?').run(key, job.id);
  db.prepare("UPDATE meta SET value = 'running' WHERE key = 'shutdown'").run();
  db.close();
  return job.id;
}

function handleRowExists(dataDir: string, instance: string): boolean {
  const db = new Database(path.join(dataDir, 'kb', 'kb.sqlite'), { readonly: true });
  const row = db.prepare('SELECT 1 FROM meta WHERE key = ?').get(`open:planted${instance}`);
  db.close();
  return row !== undefined;
}

async function server(t: Test): Promise<LocalServer> {
  const s = await startLocalServer();
  t.teardown(() => s.close());
  serve(s, '/narwhal.txt', TEXT_DOC('narwhal'), 'text/plain');
  return s;
}

t.test('pid reused by another live process: the next start resumes the dead owner\'s job', async (t) => {
  const dataDir = tempDir(t);
  const srv = await server(t);
  const pid = await livePid(t);
  t.not(processStartTime(pid), null, 'this host exposes process start times');
  const id = plantJob(dataDir, `${srv.origin}/narwhal.txt`, { pid, start: '1', instance: 'aaaa1111' });
  const fx = await startKb(t, { DATA_DIR: dataDir }, {}, srv);
  const ended = await waitEnded(fx.kb, { id } as never);
  t.equal(ended.status, 'succeeded', 'resumed and finished');
  t.equal(ended.resumed, 1);
  t.equal(fx.kb.listDocuments('reuse', {}).items.length, 1, 'its document is in');
  t.notOk(handleRowExists(dataDir, 'aaaa1111'), "the dead owner's handle row is gone");
});

t.test('pid reused by this very process (a container restart): a different instance id is a dead owner', async (t) => {
  const dataDir = tempDir(t);
  const srv = await server(t);
  const id = plantJob(dataDir, `${srv.origin}/narwhal.txt`, { pid: process.pid, start: processStartTime(process.pid), instance: 'bbbb2222' });
  const fx = await startKb(t, { DATA_DIR: dataDir }, {}, srv);
  const ended = await waitEnded(fx.kb, { id } as never);
  t.equal(ended.status, 'succeeded');
  t.equal(ended.resumed, 1);
});

t.test('while the server runs: a dead owner\'s job is cancelled (not "already ended (running)"); a live owner\'s job gets the request', async (t) => {
  const dataDir = tempDir(t);
  const srv = await server(t);
  // Never answers: an adopted job would stay running, so its end can only come from the cancel.
  srv.route('/hang.txt', () => undefined);
  const fx = await startKb(t, { DATA_DIR: dataDir }, {}, srv);
  const app = await buildTestApp(t, { config: fx.services.config, services: fx.services });
  const pid = await livePid(t);

  // Straight to the knowledge base: the job is claimed and ended at once.
  const dead = plantJob(dataDir, `${srv.origin}/hang.txt`, { pid, start: '1', instance: 'cccc3333' });
  const direct = await fx.kb.cancelJob(dead);
  t.equal(direct.status, 'cancelled', 'cancelled, not "already ended (running)"');
  t.same(direct.counts, { total: 1, done: 0, skipped: 0, failed: 0, cancelled: 1 });
  t.match(direct.reason, /its process was gone/);
  t.equal((await app.inject(`/v1/jobs/${dead}`)).json().status, 'cancelled', 'and stays so');
  const again = await app.inject({ method: 'POST', url: `/v1/jobs/${dead}/cancel` });
  t.equal(again.statusCode, 409);
  t.match(again.json().error, /already ended \(cancelled\)/);

  // Through REST the job is looked up first, which adopts it; the cancel then stops its running document.
  const viaRest = plantJob(dataDir, `${srv.origin}/hang.txt`, { pid, start: '1', instance: 'ffff6666' });
  const res = await app.inject({ method: 'POST', url: `/v1/jobs/${viaRest}/cancel` });
  t.equal(res.statusCode, 200, 'the cancel is taken');
  const ended = await waitEnded(fx.kb, res.json());
  t.equal(ended.status, 'cancelled');
  t.same(ended.counts, { total: 1, done: 0, skipped: 0, failed: 0, cancelled: 1 });

  const alive = plantJob(dataDir, `${srv.origin}/hang.txt`, { pid, start: processStartTime(pid), instance: 'dddd4444' });
  t.equal((await app.inject(`/v1/jobs/${alive}`)).json().status, 'running', 'a live owner still runs it: left alone');
  const asked = await app.inject({ method: 'POST', url: `/v1/jobs/${alive}/cancel` });
  t.equal(asked.statusCode, 200);
  t.equal(asked.json().status, 'running', 'answered as it stands');
  const check = new Database(path.join(dataDir, 'kb', 'kb.sqlite'), { readonly: true });
  t.equal(check.prepare('SELECT cancel_requested FROM jobs WHERE id = ?').pluck().get(alive), 1, 'the request is stored for its owner');
  check.close();
});

t.test('while the server runs: reading a dead owner\'s job adopts it, so it is never reported running by nobody', async (t) => {
  const dataDir = tempDir(t);
  const srv = await server(t);
  const fx = await startKb(t, { DATA_DIR: dataDir }, {}, srv);
  const pid = await livePid(t);
  const id = plantJob(dataDir, `${srv.origin}/narwhal.txt`, { pid, start: '1', instance: 'eeee5555' });
  const first = fx.kb.getJob(id);
  t.equal(first.resumed, 1, 'adopted on read: this process runs it now');
  const ended = await waitEnded(fx.kb, first);
  t.equal(ended.status, 'succeeded');
});
