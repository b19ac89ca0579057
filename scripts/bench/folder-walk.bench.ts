/**
 * Event-loop delay during folder walks (src/kb/folder-walk.ts) of a 50,000-file folder, with
 * ordinary and hostile include globs, and what one hostile glob cost with the backtracking
 * matcher used before (picomatch, the test reference now).
 *
 *   npx tsx scripts/bench/folder-walk.bench.ts                 # 50,000 files in 100 folders
 *   npx tsx scripts/bench/folder-walk.bench.ts --files 10000
 *
 * Why no worker thread: the walk's work on the main thread is matching (linear in glob x name,
 * glob-match.ts, mostly one cached DFA step per character) and bookkeeping; the file system calls
 * run on libuv's thread pool. It yields to the event loop every 8 ms of that work, so the delay
 * it adds is bounded by the yield interval plus one batch of 16 entries, which this measures
 * (monitorEventLoopDelay, 1 ms resolution, p50 / p99 / max, and the walk's own time).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import picomatch from 'picomatch';
import { selectLocalPaths } from '../../src/kb/local-files.ts';
import { round, runStandalone, SectionBuilder } from './harness.ts';

const args = process.argv.slice(2);
const FILES = Number(args.includes('--files') ? args[args.indexOf('--files') + 1] : 50_000);
const FOLDERS = 100;
const HOSTILE = '*?*?*?*?*?*?*?*?*?*?*?*?*?*?#';

await runStandalone(async () => {
  const b = new SectionBuilder('folder-walk', 'Folder walk event-loop delay', { files: FILES, folders: FOLDERS });
  const walks = b.table('Walks (event-loop delay sampled at 1 ms resolution)', ['walk', 'files selected', 'walk s', 'delay p50 ms', 'delay p99 ms', 'delay max ms']);
  const before = b.table('The backtracking matcher used before (picomatch), one name', ['glob', 'name length', 'ms']);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-walk-'));
  process.on('exit', () => fs.rmSync(root, { recursive: true, force: true }));
  const t0 = performance.now();
  for (let d = 0; d < FOLDERS; d++) {
    const dir = path.join(root, `folder-${String(d).padStart(3, '0')}`);
    fs.mkdirSync(dir);
    for (let i = 0; i < FILES / FOLDERS; i++) fs.writeFileSync(path.join(dir, `${'report-quarterly-summary-'.repeat(6)}${i}.${i % 3 ? 'txt' : 'md'}`), '');
  }
  b.note(`${FILES} files in ${FOLDERS} folders (names of ~160 characters) made in ${round((performance.now() - t0) / 1000, 1)} s.`);

  const q = (h: ReturnType<typeof monitorEventLoopDelay>, p: number) => round(h.percentile(p) / 1e6, 1);

  async function run(label: string, include: string[] | undefined): Promise<void> {
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const start = performance.now();
    const sel = await selectLocalPaths([root], {
      allowed: { dirs: [fs.realpathSync(root)], origin: 'ALLOWED_DIRS' },
      ...(include ? { include } : {}),
      maxBytes: 1 << 20,
      maxFiles: 1_000_000,
    });
    const ms = performance.now() - start;
    h.disable();
    walks.rows.push([label, sel.files.length, round(ms / 1000, 2), q(h, 50), q(h, 99), round(h.max / 1e6, 1)]);
  }

  await run('no glob', undefined);
  await run('no glob (again, warm)', undefined);
  await run('include **/*.md', ['**/*.md']);
  await run(`include ${HOSTILE}`, [HOSTILE]);
  await run('include *a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b', ['*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b']);
  await run('include 64 brace alternatives', ['{a,b}{c,d}{e,f}{r,g}{h,i}{j,k}*']);

  // The matcher used before, on one name: each extra `*?` pair multiplies the time (6 pairs: minutes).
  const name = `${'report-quarterly-summary-'.repeat(6)}1.txt`;
  for (const pairs of [3, 4, 5]) {
    const g = `${'*?'.repeat(pairs)}#`;
    const m = picomatch(g, { dot: true });
    const s = performance.now();
    m(name);
    before.rows.push([g, name.length, round(performance.now() - s, 1)]);
  }
  return b.finish();
});
