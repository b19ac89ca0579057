// Where `npm test`'s CPU goes: runs each test file of the suite alone, as tap runs it (the same
// Node arguments: tap's own preloads, then package.json's "tap"."node-arg"), and records the CPU
// time (user + sys) of the file's process and every child it waited for (servers, stdio servers,
// extraction children), read from /usr/bin/time. CPU time, not wall, because it does not depend
// on what else the machine is doing: on an idle machine `npm test`'s wall is about the total CPU
// divided by the cores, plus the tap runner's own ~3 s.
//
//   node scripts/test-cpu.mjs [--jobs N] [--top N] [--out file.json] [--weights] [file.test.ts ...]
//   (no files: the suite's files, as scripts/test-groups.mjs lists them)
//   --weights: also writes each file's CPU to test/setup/test-cpu-weights.json, which
//   scripts/test-groups.mjs packs `npm test`'s processes by (whole suite runs only)
//
// Needs GNU time at /usr/bin/time (Debian: apt-get install time).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { suiteFiles } from './test-groups.mjs';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  if (i === -1) return fallback;
  const [, value] = args.splice(i, 2);
  return value;
};
const jobs = Number.parseInt(option('--jobs', '1'), 10);
const top = Number.parseInt(option('--top', '25'), 10);
const out = option('--out', null);
if (!existsSync('/usr/bin/time')) {
  console.error('test-cpu: needs GNU time at /usr/bin/time');
  process.exit(2);
}

const writeWeights = args.includes('--weights');
if (writeWeights) args.splice(args.indexOf('--weights'), 1);
const files = args.length > 0 ? args : suiteFiles();

// tap's own arguments for a test process (@tapjs/run's test-argv): the plugins' import loaders,
// source maps, @tapjs/processinfo last; then the project's node-arg.
// (Read from the built Test module's source: importing it alone trips over an import cycle.)
const testModule = import.meta.resolve('@tapjs/test');
const importLoaders = [...(/export const importLoaders = \[([^\]]*)\]/.exec(readFileSync(new URL(testModule), 'utf8'))?.[1] ?? '').matchAll(/"([^"]+)"/g)].map((m) => m[1]);
const tapConfig = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).tap ?? {};
const nodeArgs = [
  ...importLoaders.map((l) => `--import=${pathToFileURL(createRequire(new URL(testModule)).resolve(l)).href}`),
  '--enable-source-maps',
  `--import=${import.meta.resolve('@tapjs/processinfo/import')}`,
  ...(tapConfig['node-arg'] ?? []),
];

function runOne(file) {
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/time', ['-f', '\n@@cpu %U %S %e', process.execPath, ...nodeArgs, file], {
      cwd: root,
      env: { ...process.env, TAP: '1', TAP_DISABLE_COVERAGE: '1', TAP_TIMEOUT: String(tapConfig.timeout ?? 30) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      const m = /@@cpu ([\d.]+) ([\d.]+) ([\d.]+)/.exec(stderr);
      const failed = code !== 0 || /^not ok /m.test(stdout);
      resolve({ file, user: m ? Number(m[1]) : NaN, sys: m ? Number(m[2]) : NaN, cpu: m ? Number(m[1]) + Number(m[2]) : NaN, wall: m ? Number(m[3]) : NaN, ok: !failed, code });
    });
  });
}

const results = [];
let next = 0;
const started = Date.now();
await Promise.all(
  Array.from({ length: Math.max(1, jobs) }, async () => {
    while (next < files.length) {
      const file = files[next++];
      const r = await runOne(file);
      results.push(r);
      console.log(`${r.ok ? 'ok    ' : 'FAILED'} ${r.cpu.toFixed(2).padStart(7)} s cpu ${r.wall.toFixed(2).padStart(7)} s wall  ${file}`);
    }
  }),
);
results.sort((a, b) => b.cpu - a.cpu);
const total = results.reduce((s, r) => s + r.cpu, 0);
const cores = os.availableParallelism?.() ?? os.cpus().length;
console.log(`\ntop ${Math.min(top, results.length)} by CPU:`);
for (const r of results.slice(0, top)) console.log(`${r.cpu.toFixed(2).padStart(7)} s  ${r.file}`);
console.log(`\n${results.length} files, ${results.filter((r) => !r.ok).length} failed; total CPU ${total.toFixed(1)} s (${(total / 60).toFixed(1)} min); measured in ${((Date.now() - started) / 1000).toFixed(0)} s wall with ${jobs} job(s)`);
console.log(`estimated idle wall of the suite on ${cores} cores: ~${(total / cores / 60).toFixed(1)} min (CPU / cores; the runner adds ~3 s)`);
if (out) writeFileSync(out, JSON.stringify({ total, files: results }, null, 2));
if (writeWeights) {
  if (args.length > 0) {
    console.error('--weights: only from a whole-suite run (no file arguments)');
  } else {
    const weights = Object.fromEntries(results.filter((r) => Number.isFinite(r.cpu)).map((r) => [r.file, Math.round(r.cpu * 10) / 10]).sort((a, b) => a[0].localeCompare(b[0])));
    writeFileSync(path.join(root, 'test', 'setup', 'test-cpu-weights.json'), `${JSON.stringify(weights, null, 1)}\n`);
    console.log('wrote test/setup/test-cpu-weights.json');
  }
}
