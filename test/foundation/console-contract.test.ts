/**
 * One contract (issue 21): the console's wire types and pure helpers come from src/contract, the
 * module the server and the tools publish their schemas from, never from a hand-written copy.
 * Read from the sources: every type the console declares either derives from a contract type or
 * is one of the console's own (UI) types listed here; no console type takes a contract name; the
 * console imports of src/ are the contract's only, and its schema modules type-only (no TypeBox in
 * the bundle); the contract imports nothing but TypeBox and itself (Vite bundles it for the
 * browser). The job-progress and metric functions the console runs are the contract's very
 * functions. The console's own type check (npm run typecheck:console) then fails on any field the
 * console reads that the server's schemas do not have.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as contractProgress from '../../src/contract/job-progress.ts';
import * as contractMetrics from '../../src/contract/metrics.ts';
import * as consoleProgress from '../../console/src/job-progress.ts';
import * as consoleMetrics from '../../console/src/eval/metrics.ts';
import { COLLECTION_MAX_TOP_K as KB_MAX_TOP_K } from '../../src/kb/collection-search.ts';
import { DEFAULT_TOP_K } from '../../src/retrieval/contracts.ts';
import { COLLECTION_MAX_TOP_K, SEARCH_DEFAULT_TOP_K } from '../../src/contract/kb-schemas.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const contractDir = path.join(root, 'src', 'contract');
const consoleDir = path.join(root, 'console', 'src');

/**
 * The console's own types: UI state, options and reports the server never sends. A new console
 * type that is neither derived from a contract type nor listed here fails: derive it from
 * src/contract, or add it here when it is not a wire shape.
 */
const CONSOLE_OWN_TYPES = new Set([
  'BarSeries', // charts.tsx: a chart's series
  'Column', // table.tsx: a table column
  'RequestOptions', // api.ts: a call's signal and query string
  'SseEvent', // api.ts: one Server-Sent Events frame (its data is a JobEvent)
  'Availability', // capabilities.ts: whether a variant can run here, and why not
  'WaterfallBar', // trace-model.ts: one drawn bar
  'Waterfall',
  'Movement', // trace-model.ts: how a candidate moved
  'PageComponent', // main.tsx
  'Route', // router.ts: the hash route
  'Variant', // eval/run-variants.ts: a retrieval variant to evaluate
  'VariantResult',
  'IngestReport',
  'CorpusDoc', // eval/parse-set.ts: a user's BEIR or list file
  'EvalQuery',
  'EvalSet',
  'Qrels',
  'VariantMetrics', // eval/metrics.ts: means over queries (the formulas are the contract's)
  'LatencySummary',
  'Tracked', // pages/collection.tsx: an upload the page follows
  'Format', // pages/evaluate.tsx: which kind of file the user gives
  'Target', // pages: what to search or evaluate
  'Answer', // pages/search.tsx: either answer as the page draws it (its fields are contract types)
  'Segment', // pages/document.tsx: a piece of the reassembled text
  'Tab',
]);

function filesUnder(dir: string, re: RegExp): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && re.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

const consoleFiles = filesUnder(consoleDir, /\.tsx?$/);
const contractFiles = filesUnder(contractDir, /\.ts$/);
const rel = (f: string) => path.relative(root, f);

/** Names the contract exports (types, interfaces, constants, functions). */
const contractNames = new Set(
  contractFiles.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/^export (?:type|interface|const|function|class) (\w+)/gm)].map((m) => m[1])),
);

interface Import {
  from: string;
  typeOnly: boolean;
  names: string[];
}

function importsOf(src: string): Import[] {
  return [...src.matchAll(/^import\s+(type\s+)?(?:\{([^}]*)\}|[\w*\s]+?)\s*(?:,\s*\{([^}]*)\})?\s*from\s+'([^']+)'/gm)].map((m) => {
    const list = `${m[2] ?? ''},${m[3] ?? ''}`;
    const names = list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const allTypes = names.length > 0 && names.every((n) => n.startsWith('type '));
    return {
      from: m[4],
      typeOnly: !!m[1] || allTypes,
      names: names.map((n) => n.replace(/^type\s+/, '').split(/\s+as\s+/).pop()!.trim()),
    };
  });
}

const resolves = (file: string, spec: string) => (spec.startsWith('.') ? path.resolve(path.dirname(file), spec) : spec);

/** The type declarations of a file with their text (up to the next line that starts at column 0 after the first). */
function declarations(src: string): Array<{ name: string; kind: string; text: string }> {
  const out: Array<{ name: string; kind: string; text: string }> = [];
  const lines = src.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^(?:export\s+)?(interface|type)\s+(\w+)/.exec(lines[i]);
    if (!m) continue;
    let j = i + 1;
    while (j < lines.length && (lines[j] === '' || /^\s/.test(lines[j]) || /^[}\]]/.test(lines[j]))) {
      if (/^[}\]]/.test(lines[j])) {
        j++;
        break;
      }
      j++;
    }
    out.push({ kind: m[1], name: m[2], text: lines.slice(i, j).join('\n') });
  }
  return out;
}

t.test('every console type derives from the contract or is one of the console’s own', async (t) => {
  let checked = 0;
  for (const file of consoleFiles) {
    const src = readFileSync(file, 'utf8');
    const fromContract = new Set(
      importsOf(src)
        .filter((i) => resolves(file, i.from).startsWith(contractDir + path.sep))
        .flatMap((i) => i.names),
    );
    for (const d of declarations(src)) {
      checked++;
      t.notOk(contractNames.has(d.name), `${rel(file)}: ${d.kind} ${d.name} takes a name src/contract exports: import it instead`);
      const derived = [...fromContract].some((n) => new RegExp(`\\b${n}\\b`).test(d.text.replace(/^[^=<{]*\b(interface|type)\s+\w+/, '')));
      t.ok(
        derived || CONSOLE_OWN_TYPES.has(d.name),
        `${rel(file)}: ${d.kind} ${d.name} is neither derived from a src/contract type nor a listed console-only type`,
      );
    }
  }
  t.ok(checked > 20, `the declarations were found (${checked})`);
});

t.test('the console reaches src/ only through the contract, and its schemas only as types', async (t) => {
  for (const file of consoleFiles) {
    for (const imp of importsOf(readFileSync(file, 'utf8'))) {
      const target = resolves(file, imp.from);
      if (!path.isAbsolute(target) || !target.startsWith(path.join(root, 'src') + path.sep)) continue;
      t.ok(target.startsWith(contractDir + path.sep), `${rel(file)} imports ${imp.from}: the console imports only src/contract`);
      if (/-schemas\.ts$/.test(target)) {
        t.ok(imp.typeOnly, `${rel(file)} imports ${imp.from} for values: schema modules are imported as types only (TypeBox stays out of the bundle)`);
      }
    }
  }
});

t.test('the contract is Node-free: it imports TypeBox and itself only', async (t) => {
  for (const file of contractFiles) {
    const src = readFileSync(file, 'utf8');
    for (const imp of importsOf(src)) {
      const ok = imp.from === 'typebox' || (imp.from.startsWith('./') && !imp.from.includes('/', 2));
      t.ok(ok, `${rel(file)} imports ${imp.from}`);
    }
    t.notMatch(src, /\b(?:process|Buffer|require)\s*[.(]/, `${rel(file)} uses no Node globals`);
  }
});

t.test('job progress: the console draws the contract’s fractions', async (t) => {
  t.equal(consoleProgress.itemFraction, contractProgress.itemFraction, 'itemFraction is the contract’s function');
  t.equal(consoleProgress.ENDED_JOB, contractProgress.ENDED_JOB_STATUSES, 'the ended job statuses are the contract’s set');
  for (const file of consoleFiles) {
    t.notMatch(readFileSync(file, 'utf8'), /function\s+(itemFraction|jobFraction)\b/, `${rel(file)} has no progress formula of its own`);
  }
  // The server reports the same formula: job progress is computed once, by the job state machine both
  // queues use, and its fractions are the contract's jobFraction.
  const state = readFileSync(path.join(root, 'src', 'kb', 'job-state.ts'), 'utf8');
  t.match(state, /import \{[^}]*\bjobFraction\b[^}]*\} from '\.\.\/contract\/job-progress\.ts'/, 'the job state machine imports jobFraction from the contract');
  for (const queue of ['job-runner.ts', 'redis-job-queue.ts']) {
    t.match(readFileSync(path.join(root, 'src', 'kb', queue), 'utf8'), /from '\.\/job-state\.ts'/, `${queue} takes job state from job-state.ts`);
  }
  const item = (stage: Parameters<typeof contractProgress.itemFraction>[0]['stage'], pages_done: number | null = null, pages_total: number | null = null) => ({
    stage,
    progress: { pages_done, pages_total, chunks_embedded: null, chunks_total: null },
  });
  t.ok(Math.abs(consoleProgress.itemFraction(item('extracting', 5, 10)) - 0.3) < 1e-9, 'half the pages extracted: 0.1 + 0.4 x 0.5 (the console had 0.1 + 0.45)');
  t.equal(consoleProgress.itemFraction(item('chunking')), 0.55, 'chunking (the console had 0.6)');
  t.equal(consoleProgress.itemFraction(item('indexing')), 0.97, 'indexing (the console had 0.95)');
});

t.test('metrics: the Evaluate page scores with the contract’s formulas', async (t) => {
  for (const name of ['ndcgAt', 'recallAt', 'mrrAt', 'hitAt'] as const) {
    t.equal(consoleMetrics[name], contractMetrics[name], `${name} is the contract’s function`);
  }
  for (const file of consoleFiles) {
    t.notMatch(readFileSync(file, 'utf8'), /function\s+(ndcgAt|recallAt|mrrAt|hitAt)\b/, `${rel(file)} has no metric formula of its own`);
  }
});

t.test('search limits in the contract are the ones the server enforces', async (t) => {
  t.equal(COLLECTION_MAX_TOP_K, KB_MAX_TOP_K, 'search_collection top_k maximum');
  t.equal(SEARCH_DEFAULT_TOP_K, DEFAULT_TOP_K, 'default top_k');
});
