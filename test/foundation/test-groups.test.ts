/**
 * `npm test` runs the suite's files in groups, several per process (scripts/test-groups.mjs, the
 * pretest): every file of the suite must be in exactly one group, none of the other suites' files
 * may be, a file marked `test-process: own` runs alone, and the written group files import exactly
 * the planned files, which exist.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDir } from '../helper.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts/test-groups.mjs');
const run = (...args: string[]) => execFileSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8' });

t.test('every suite file is in exactly one group; other suites and files marked own are not shared', async (t) => {
  const files = run('--list').split('\n').filter(Boolean);
  const groups = JSON.parse(run('--plan')) as { files: string[]; weight: number }[];
  t.ok(files.length > 100, `the suite has its files (${files.length})`);
  t.ok(files.includes('test/foundation/test-groups.test.ts'), 'this file is one of them');
  t.notOk(
    files.some((f) => /^test\/(corpus|e2e|scale|reliability|groups)\//.test(f) || f.includes('/fixtures/')),
    'no file of another suite, of the groups or of fixtures',
  );
  const planned = groups.flatMap((g) => g.files);
  t.same([...planned].sort(), files, 'the groups hold the suite, each file once');
  t.ok(groups.length < files.length / 4, `${files.length} files in ${groups.length} processes`);

  const own = files.filter((f) => /test-process: own\b/.test(readFileSync(path.join(ROOT, f), 'utf8').slice(0, 2048)));
  t.ok(own.length > 0, 'some file asks for its own process');
  for (const f of own) t.ok(groups.some((g) => g.files.length === 1 && g.files[0] === f), `${f} runs alone`);
});

t.test('the written groups import the planned files, in order, each under its own subtest', async (t) => {
  const out = tempDir(t);
  run('--out', out);
  const groups = JSON.parse(run('--plan')) as { files: string[] }[];
  const written = readdirSync(out).sort();
  t.equal(written.length, groups.length, 'one file per group');
  written.forEach((name, i) => {
    const source = readFileSync(path.join(out, name), 'utf8');
    const imported = [...source.matchAll(/await t\.test\("([^"]+)", \(\) => import\("([^"]+)"\)\);/g)];
    t.same(
      imported.map((m) => m[1]),
      groups[i].files,
      `${name}: its files, in order`,
    );
    for (const m of imported) t.ok(existsSync(fileURLToPath(m[2])) && fileURLToPath(m[2]) === path.join(ROOT, m[1]), `${m[1]} is imported from where it is`);
    t.match(source, /t\.setTimeout\(\d+\)/, `${name}: a timeout for all its files`);
  });
});
