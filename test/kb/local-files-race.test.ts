/**
 * Reads and walks while another process swaps a folder inside ALLOWED_DIRS with a symlink to a
 * folder outside (two renames each way, as close to renameat2's exchange as Node gets): not one
 * read may return the outside content, and no walk may list an outside file. Before, a check of
 * the path followed by open() read outside in 54 of 800 attempts; the descriptor is now checked
 * after opening (src/kb/safe-open.ts). Also: a file replaced since the walk is refused.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helper.ts';
import { readLocalFile, resolveLocalPaths, type AllowedFolders } from '../../src/kb/local-files.ts';

const READS = 2_000;
const FILES = 20;
const MAX = 1024 * 1024;

/** The swap loop, as its own process so it runs truly alongside the reads. */
const SWAPPER = `
const fs = require('node:fs');
const [dir, link, tmp] = process.argv.slice(1);
process.stdout.write('ready\\n');
for (;;) {
  fs.renameSync(dir, tmp);   // the real folder out of the way
  fs.renameSync(link, dir);  // the symlink to outside takes its name
  fs.renameSync(dir, link);  // and back
  fs.renameSync(tmp, dir);
}`;

function world(t: Parameters<typeof tempDir>[0]) {
  const base = fs.realpathSync(tempDir(t, 'kb-race-'));
  const allowed = path.join(base, 'allowed');
  const outside = path.join(base, 'outside');
  const dir = path.join(allowed, 'docs');
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(outside);
  for (let i = 0; i < FILES; i++) {
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `inside ${i}`);
    fs.writeFileSync(path.join(outside, `f${i}.txt`), `SECRET ${i}`);
  }
  const link = path.join(allowed, 'swap-link');
  fs.symlinkSync(outside, link);
  return { allowed, outside, dir, link, tmp: path.join(allowed, 'swap-tmp'), folders: { dirs: [allowed], origin: 'ALLOWED_DIRS' } as AllowedFolders };
}

async function startSwapper(t: Parameters<typeof tempDir>[0], dir: string, link: string, tmp: string) {
  const child = spawn(process.execPath, ['-e', SWAPPER, dir, link, tmp], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`swapper exited ${code}: ${stderr}`)));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  };
  t.teardown(stop);
  return { stop, alive: () => child.exitCode === null && child.signalCode === null };
}

/** Puts the tree back as it was (the swapper may have stopped between two renames). */
function restore(w: ReturnType<typeof world>) {
  if (fs.existsSync(w.tmp)) {
    if (fs.lstatSync(w.dir, { throwIfNoEntry: false })?.isSymbolicLink()) fs.renameSync(w.dir, w.link);
    fs.renameSync(w.tmp, w.dir);
  } else if (!fs.existsSync(w.link)) {
    fs.renameSync(w.dir, w.link);
  }
}

t.test(`${READS} reads during folder <-> symlink swaps: nothing outside is read`, async (t) => {
  const w = world(t);
  const files = await resolveLocalPaths([w.dir], { allowed: w.folders, maxBytes: MAX });
  t.equal(files.length, FILES);
  const swapper = await startSwapper(t, w.dir, w.link, w.tmp);
  const outcomes = { inside: 0, outside: 0, refused: 0, missing: 0, other: 0 };
  const codes = new Set<string>();
  for (let i = 0; i < READS; i++) {
    const f = files[i % FILES]!;
    try {
      const text = (await readLocalFile(f.realpath, w.folders.dirs, 'ALLOWED_DIRS', MAX, { id: f.id })).toString();
      if (text.startsWith('SECRET')) outcomes.outside++;
      else if (text.startsWith('inside')) outcomes.inside++;
      else outcomes.other++;
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'none';
      codes.add(code);
      if (code === 'URL_NOT_ALLOWED' || code === 'CONFLICT') outcomes.refused++;
      else if (code === 'NOT_FOUND') outcomes.missing++;
      else outcomes.other++;
    }
  }
  t.ok(swapper.alive(), 'the swapper ran through all the reads');
  await swapper.stop();
  restore(w);
  t.comment(JSON.stringify(outcomes));
  t.equal(outcomes.outside, 0, 'no read returned the outside content');
  t.equal(outcomes.other, 0, `only coded refusals (${[...codes].join(', ')})`);
  t.ok(outcomes.inside > 0, 'reads between swaps still succeed');
  t.equal(outcomes.inside + outcomes.refused + outcomes.missing, READS);
  // After the swaps, the same files read normally again.
  t.equal((await readLocalFile(files[0]!.realpath, w.folders.dirs, 'ALLOWED_DIRS', MAX, { id: files[0]!.id })).toString(), 'inside 0');
});

t.test('walks during folder <-> symlink swaps never list an outside file', async (t) => {
  const w = world(t);
  const outsideIds = new Set(fs.readdirSync(w.outside).map((n) => {
    const st = fs.statSync(path.join(w.outside, n), { bigint: true });
    return `${st.dev}:${st.ino}`;
  }));
  const swapper = await startSwapper(t, w.dir, w.link, w.tmp);
  let listed = 0;
  let leaked = 0;
  for (let i = 0; i < 200; i++) {
    const files = await resolveLocalPaths([w.allowed], { allowed: w.folders, maxBytes: MAX });
    for (const f of files) {
      listed++;
      if (outsideIds.has(f.id) || !f.realpath.startsWith(w.allowed + path.sep)) leaked++;
    }
  }
  t.ok(swapper.alive(), 'the swapper ran through all the walks');
  await swapper.stop();
  restore(w);
  t.comment(`${listed} files listed over 200 walks`);
  t.equal(leaked, 0, 'no outside file listed');
  t.ok(listed > 0);
});

t.test('a file replaced since the walk is refused, not read', async (t) => {
  const w = world(t);
  const [f] = await resolveLocalPaths([path.join(w.dir, 'f0.txt')], { allowed: w.folders, maxBytes: MAX });
  const tmp = path.join(w.dir, 'f0.txt.new');
  fs.writeFileSync(tmp, 'replacement');
  fs.renameSync(tmp, path.join(w.dir, 'f0.txt'));
  const err = await readLocalFile(f!.realpath, w.folders.dirs, 'ALLOWED_DIRS', MAX, { id: f!.id }).catch((e) => e);
  t.equal(err.code, 'CONFLICT');
  t.match(err.message, /was replaced since its folder was walked/);
  // Without a recorded identity (a job from before), the file at the path is read.
  t.equal((await readLocalFile(f!.realpath, w.folders.dirs, 'ALLOWED_DIRS', MAX)).toString(), 'replacement');
});
