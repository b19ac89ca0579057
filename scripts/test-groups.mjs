// `npm test`'s pretest (after the build): writes test/groups/NN.test.mjs, each of which runs several
// of the suite's test files one after the other in one process. tap runs every file it is given in
// a process of its own, and on 2 cores that start is most of what a small test costs: Node, tap and
// the loader thread (~0.6 s of CPU), then importing the app (~1.4 s more) for the half of the files
// that build it. Measured on 18 app test files: 53 s of CPU as 18 processes, 16 s as one.
//
// Each file still runs as written: its module is imported inside a subtest named after it, so its
// top-level code (and its tests, queued on tap's root) run only after the previous file's tests
// have all finished, and the file's name heads its tests in the output. A file whose first lines
// carry `test-process: own` runs alone (it measures its own process, or changes what the whole
// process sees). `npx tap test/x/y.test.ts` still runs one file by itself.
//
// Groups are packed by each file's measured CPU (test/setup/test-cpu-weights.json, written by
// `node scripts/test-cpu.mjs --weights`; a file not in it counts as DEFAULT_WEIGHT), largest first,
// so the four jobs finish together.
//
//   node scripts/test-groups.mjs [--out DIR]   writes the groups (default test/groups)
//   node scripts/test-groups.mjs --list | --plan   prints the suite's files, or the groups as JSON
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
/** Where the suite's files are, and which folders are other suites (test:corpus, test:e2e, ...). */
const SUITE_DIR = 'test';
const OTHER_SUITES = new Set(['test/corpus', 'test/reliability', 'test/scale', 'test/e2e', 'test/groups']);
const GROUPS_DIR = path.join(root, 'test', 'groups');
const WEIGHTS = path.join(root, 'test', 'setup', 'test-cpu-weights.json');
/**
 * Seconds of CPU a group aims at (as its files measure alone); a heavier file is a group by itself.
 * Measured on an idle 2-core machine (233 files, jobs 4): one process per file 425 s wall and 835 s
 * of CPU; groups of 24 s, 36 processes: 311 s, 608 s; 40 s, 22 processes: 272 s, 524 s; 60 s,
 * 15 processes: 245 s, 460 s. Larger groups would leave the four jobs less to balance.
 */
const GROUP_WEIGHT = 60;
const DEFAULT_WEIGHT = 3;
/** tap's per-file timeout (package.json "tap"."timeout") is given to each file of a group. */
const FILE_TIMEOUT_S = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).tap?.timeout ?? 30;

/** The suite's test files, relative to the root, sorted. */
export function suiteFiles() {
  const out = [];
  const walk = (rel) => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!OTHER_SUITES.has(child) && entry.name !== 'fixtures') walk(child);
      } else if (entry.name.endsWith('.test.ts')) out.push(child);
    }
  };
  walk(SUITE_DIR);
  return out.sort();
}

/** True when the file asks for a process of its own (`test-process: own` in its first 2 KB). */
function runsAlone(file) {
  return /test-process: own\b/.test(readFileSync(path.join(root, file), 'utf8').slice(0, 2048));
}

function weights() {
  try {
    return JSON.parse(readFileSync(WEIGHTS, 'utf8'));
  } catch {
    return {};
  }
}

/** Longest first, each file to the lightest group; groups numbered heaviest first. */
export function planGroups(files = suiteFiles()) {
  const known = weights();
  const weighed = files.map((file) => ({ file, weight: known[file] ?? DEFAULT_WEIGHT, alone: runsAlone(file) }));
  const total = weighed.reduce((s, f) => s + f.weight, 0);
  const groups = [];
  const shared = Array.from({ length: Math.max(1, Math.round(total / GROUP_WEIGHT)) }, () => ({ files: [], weight: 0 }));
  for (const f of weighed.sort((a, b) => b.weight - a.weight || a.file.localeCompare(b.file))) {
    if (f.alone || f.weight >= GROUP_WEIGHT) {
      groups.push({ files: [f.file], weight: f.weight });
      continue;
    }
    const lightest = shared.reduce((min, g) => (g.weight < min.weight ? g : min));
    lightest.files.push(f.file);
    lightest.weight += f.weight;
  }
  return [...groups, ...shared.filter((g) => g.files.length > 0)]
    .sort((a, b) => b.weight - a.weight)
    .map((g) => ({ ...g, files: g.files.sort() }));
}

function groupSource(files) {
  const imports = files.map((file) => `await t.test(${JSON.stringify(file)}, () => import(${JSON.stringify(pathToFileURL(path.join(root, file)).href)}));`);
  return [
    '// Written by scripts/test-groups.mjs (npm test\'s pretest): these test files, one after the other in one process.',
    "import t from 'tap';",
    '',
    `t.setTimeout(${FILE_TIMEOUT_S * 1000 * files.length});`,
    ...imports,
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  if (args.includes('--list')) {
    console.log(suiteFiles().join('\n'));
  } else if (args.includes('--plan')) {
    console.log(JSON.stringify(planGroups(), null, 1));
  } else {
    const out = args.includes('--out') ? path.resolve(args[args.indexOf('--out') + 1]) : GROUPS_DIR;
    const groups = planGroups();
    if (existsSync(out)) rmSync(out, { recursive: true });
    mkdirSync(out, { recursive: true });
    const width = String(groups.length).length;
    groups.forEach((g, i) => writeFileSync(path.join(out, `${String(i + 1).padStart(width, '0')}.test.mjs`), groupSource(g.files)));
    const files = groups.reduce((n, g) => n + g.files.length, 0);
    console.log(`${path.relative(root, out) || '.'}: ${files} test files in ${groups.length} processes`);
  }
}
