/**
 * kill -9 during a folder source's sync, then a restart on the same DATA_DIR: the sync's one job
 * (documents first, then its deletions) is resumed by the knowledge base, the source's sync is
 * taken up again once the dead process's lease expires, and it ends with the collection exactly
 * matching the folder: every file once, the changed ones at their new content, the deleted ones
 * gone with the reason in their history. Polled with generous deadlines, no fixed sleeps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { tempDir } from '../helper.ts';
import { pollUntil } from '../poll.ts';
import { startKb } from './jobs-fixtures.ts';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';

const CHILD = path.join(import.meta.dirname, 'sources-restart-child.ts');

function runChild(t: Test, dataDir: string, folder: string, mode: 'first' | 'resync'): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [...SOURCE_LOADER_ARGS, CHILD, dataDir, folder, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  return { child, out: () => out, err: () => err };
}

const body = (name: string, version: string) => `# ${name}\nThe ${name} note, ${version}: word${name.replace(/\W/g, '')}${version} appears only here.\n`;

t.test('kill -9 mid-sync: the collection stays consistent and the sync resumes to the right documents', async (t) => {
  const dataDir = tempDir(t, 'src-restart-data-');
  const folder = fs.realpathSync(tempDir(t, 'src-restart-folder-'));
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(folder, `old-${i}.md`), body(`old-${i}`, 'v1'));

  // The first sync, to its end, in a process of its own.
  const first = runChild(t, dataDir, folder, 'first');
  const code = await new Promise((r) => first.child.once('exit', r));
  t.equal(code, 0, first.err());
  t.match(first.out(), /source src_\w+ succeeded \{"new":20,/, 'first sync: 20 new');

  // Changes: 5 deleted, 5 edited, 150 added.
  for (let i = 0; i < 5; i++) fs.rmSync(path.join(folder, `old-${i}.md`));
  for (let i = 5; i < 10; i++) fs.writeFileSync(path.join(folder, `old-${i}.md`), body(`old-${i}`, 'v2'));
  for (let i = 0; i < 150; i++) fs.writeFileSync(path.join(folder, `new-${String(i).padStart(3, '0')}.md`), body(`new-${i}`, 'v1'));

  // The resync is killed once a few of its documents are done (its deletions come after them).
  const second = runChild(t, dataDir, folder, 'resync');
  let exited = false;
  second.child.once('exit', () => (exited = true));
  await pollUntil(() => {
    if (exited) throw new Error(`child exited early: ${second.err()}`);
    return (second.out().match(/ done\n/g) ?? []).length >= 5;
  }, 'the resync to be under way', { timeoutMs: 120_000, everyMs: 5 });
  second.child.kill('SIGKILL');
  await new Promise((r) => (exited ? r(null) : second.child.once('exit', r)));
  const jobId = /job (job_\w+)/.exec(second.out())![1]!;
  t.notMatch(second.out(), /ended /, 'killed before its job ended');

  // A restart on the same DATA_DIR.
  const { kb, services } = await startKb(t, { DATA_DIR: dataDir, ALLOWED_DIRS: folder, SOURCES_WATCH: 'false', SOURCES_SCHEDULER: 'false', SOURCES_LEASE_SECONDS: '5' });
  const [source] = services.sources.list('synced').items;
  const interrupted = await kb.waitForJob(jobId, 120_000);
  t.equal(interrupted.status, 'succeeded', 'the interrupted job ended');
  t.equal(interrupted.resumed, 1, 'it was resumed after the restart');
  const deletes = interrupted.items.filter((i) => i.delete);
  t.equal(deletes.length, 5, 'its five deletions are steps of the job');
  t.ok(deletes.every((i) => i.stage === 'done' || i.stage === 'skipped'), 'and they ran');

  let s = services.sources.get('synced', source!.id);
  await pollUntil(() => {
    s = services.sources.get('synced', source!.id);
    return s.last_status !== 'running' && !s.running && s.last_job_id !== jobId;
  }, 'the interrupted sync to be resumed and end', { timeoutMs: 120_000, everyMs: 50 });
  t.equal(s.last_status, 'succeeded', JSON.stringify(s));
  t.equal(s.counts?.gone ?? -1, 0, 'nothing left to delete after the resumed job');

  const docs = kb.listDocuments('synced', { limit: 500 });
  const files = fs.readdirSync(folder).sort();
  t.equal(files.length, 165);
  t.same(docs.items.map((d) => path.basename(d.source)).sort(), files, 'every file once, the deleted ones gone');
  t.equal(docs.total, 165, 'no duplicates');
  t.same(docs.items.filter((d) => d.status !== 'ready').map((d) => [d.source, d.status]), [], 'every document ready');
  for (const i of [5, 9]) {
    const r = await kb.search('synced', { query: `wordold${i}v2` }, { signal: AbortSignal.timeout(30_000) });
    t.equal(path.basename(r.results[0]?.source ?? ''), `old-${i}.md`, `old-${i}.md at its new content`);
  }
  const gone = await kb.search('synced', { query: 'wordold0v1' }, { signal: AbortSignal.timeout(30_000) });
  t.equal(gone.results.length, 0, 'a deleted file is not found');
  // The next sync finds nothing to do: the records match the folder.
  await services.sources.sync('synced', source!.id, 60_000);
  await services.sources.settled(source!.id);
  s = services.sources.get('synced', source!.id);
  t.match(s.counts, { new: 0, changed: 0, gone: 0, unchanged: 165, failed: 0 }, 'a resync after the resume changes nothing');
});
