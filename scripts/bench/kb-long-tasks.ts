/**
 * Reads a V8 CPU profile (node --cpu-prof, e.g. the kb bench's server under KB_BENCH_CPU_PROF) and
 * lists the long tasks in it: runs of consecutive non-idle samples (the event loop busy without a
 * break) longer than a threshold, each with where its time went, inclusive (the project's own
 * functions, which call into SQLite and libraries) and self (the leaf functions, GC included).
 * That names what kept /health waiting.
 *
 *   npx tsx scripts/bench/kb-long-tasks.ts PROFILE.cpuprofile [min_ms=50] [top=12] [long-turns.json]
 *
 * A busy server has no idle gaps between its turns, so runs of samples join many turns; the kb
 * bench also writes the long turns its server measured (a 10 ms timer fired late: the turn's end
 * on the monotonic clock and its length). Given that file, the samples inside each long turn are
 * what is listed instead.
 */
import fs from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, minArg, topArg, turnsFile] = process.argv.slice(2);
if (!file) {
  console.error('usage: kb-long-tasks.ts PROFILE.cpuprofile [min_ms] [top]');
  process.exit(2);
}
const MIN_MS = Number(minArg ?? 50);
const TOP = Number(topArg ?? 12);
const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const n of prof.nodes) byId.set(n.id, n);
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const short = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|node_modules)\//, '$1/').replace(/^file:\/\//, '')}:${f.lineNumber + 1}`;
const own = (f: CallFrame) => /\/src\//.test(f.url) && !/node_modules/.test(f.url);

interface Task {
  startMs: number;
  ms: number;
  /** The process CPU time the server measured for the turn (ms), when known. */
  cpu?: number;
  samples: Array<{ node: number; us: number }>;
}
const tasks: Task[] = [];
let cur: Task | null = null;
let t = prof.startTime;
for (let i = 0; i < prof.samples.length; i++) {
  const us = prof.timeDeltas[i] ?? 0;
  t += us;
  const node = byId.get(prof.samples[i]!)!;
  const idle = node.callFrame.functionName === '(idle)';
  if (idle) {
    if (cur && cur.ms >= MIN_MS) tasks.push(cur);
    cur = null;
    continue;
  }
  // The delta before a sample is the time it stands for (V8 samples at the end of each interval).
  if (!cur) cur = { startMs: (t - prof.startTime) / 1000, ms: 0, samples: [] };
  cur.ms += us / 1000;
  cur.samples.push({ node: node.id, us });
}
if (cur && cur.ms >= MIN_MS) tasks.push(cur);
if (turnsFile) {
  // Replace the runs by the measured long turns: samples from (end - length) to end.
  const turns = JSON.parse(fs.readFileSync(turnsFile, 'utf8')) as Array<{ ms: number; hr: number; cpu?: number }>;
  tasks.length = 0;
  const times: number[] = [];
  let tt = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) times.push((tt += prof.timeDeltas[i] ?? 0));
  for (const turn of turns) {
    if (turn.ms < MIN_MS) continue;
    const from = turn.hr - turn.ms * 1000;
    const task: Task = { startMs: (from - prof.startTime) / 1000, ms: turn.ms, cpu: turn.cpu, samples: [] };
    for (let i = 0; i < times.length; i++) {
      if (times[i]! < from || times[i]! > turn.hr) continue;
      const node = byId.get(prof.samples[i]!)!;
      if (node.callFrame.functionName !== '(idle)') task.samples.push({ node: node.id, us: prof.timeDeltas[i] ?? 0 });
    }
    tasks.push(task);
  }
}

const totalMs = (prof.timeDeltas.reduce((a, b) => a + b, 0) / 1000).toFixed(0);
console.log(`${file}: ${totalMs} ms profiled, ${tasks.length} tasks >= ${MIN_MS} ms (longest ${tasks.map((x) => Math.round(x.ms)).sort((a, b) => b - a).slice(0, 10).join(', ')} ms)`);

// Aggregate over all long tasks too: what long tasks are made of.
const allIncl = new Map<string, number>();
const allSelf = new Map<string, number>();
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const top = (m: Map<string, number>, n: number) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => `    ${(us / 1000).toFixed(1).padStart(8)} ms  ${k}`)
    .join('\n');

// Longest first; by the CPU they used when the server measured it (a turn can be long only because
// the process waited for a core).
const weight = (x: Task) => x.cpu ?? x.ms;
for (const task of [...tasks].sort((a, b) => weight(b) - weight(a)).slice(0, 8)) {
  const incl = new Map<string, number>();
  const self = new Map<string, number>();
  for (const s of task.samples) {
    const leaf = byId.get(s.node)!.callFrame;
    add(self, short(leaf), s.us);
    add(allSelf, short(leaf), s.us);
    const seen = new Set<string>();
    for (let id: number | undefined = s.node; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      if (!own(f)) continue;
      const k = short(f);
      if (seen.has(k)) continue;
      seen.add(k);
      add(incl, k, s.us);
      add(allIncl, k, s.us);
    }
  }
  console.log(`\ntask at ${task.startMs.toFixed(0)} ms: ${task.ms.toFixed(1)} ms${task.cpu !== undefined ? `, ${task.cpu} ms CPU` : ''}, ${task.samples.length} samples`);
  console.log(`  inclusive (project functions):\n${top(incl, TOP)}`);
  console.log(`  self:\n${top(self, TOP)}`);
}
console.log(`\nall ${tasks.length} long tasks, inclusive (project functions):\n${top(allIncl, TOP * 2)}`);
console.log(`all long tasks, self:\n${top(allSelf, TOP * 2)}`);
