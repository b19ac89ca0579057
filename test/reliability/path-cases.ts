/**
 * Issue 19, items 1 and 2, against the real server (a child process on loopback):
 *
 * - the hostile glob: an ingest of a folder of three files with long names and
 *   `*?*?*?*?*?*?*?*?*?*?*?*?*?*?#` hung the server (no /health, SIGTERM ignored); it must answer
 *   (400: no file matches) with /health within budget. A glob past the wildcard limit: 400 naming it.
 * - the swap race: while another process swaps a folder inside ALLOWED_DIRS with a symlink to an
 *   outside folder (two renames each way), jobs read its files `reads` times in all; not one
 *   outside word may become searchable (54 of 800 reads were before).
 * - SIGTERM during a long folder walk: the process is gone within SHUTDOWN_TIMEOUT plus the
 *   documented margin (3 s, and the watchdog's 1 s).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, measure, Server, sleep, type ServerOptions } from './harness.ts';
import type { Row } from './table.ts';

const G = 'paths';
const json = { 'content-type': 'application/json' };
const HOSTILE = '*?*?*?*?*?*?*?*?*?*?*?*?*?*?#';
const INSIDE_WORD = 'insidewordq';
const OUTSIDE_WORD = 'outsidesecretq';

function row(input: string, answer: string, ms: number | null, healthMaxMs: number | null, problems: string[], note?: string): Row {
  return { group: G, input, bytes: null, answer, ms, healthMaxMs, rssPeakMb: null, pass: problems.length === 0, reason: problems.length ? problems.join('; ') : note };
}

async function post(server: Server, route: string, body: unknown, timeoutMs = 120_000) {
  const a = await call(`${server.base}${route}`, { headers: json, body: JSON.stringify(body), timeoutMs });
  let parsed: any = null;
  try {
    parsed = JSON.parse(a.body);
  } catch {
    // not JSON: the status says enough
  }
  return { ...a, json: parsed };
}

async function ended(server: Server, id: string, ms = 300_000): Promise<any> {
  const until = Date.now() + ms;
  for (;;) {
    const a = await call(`${server.base}/v1/jobs/${id}`, { timeoutMs: 30_000 });
    const job = JSON.parse(a.body);
    if (!['queued', 'running'].includes(job.status)) return job;
    if (Date.now() > until) throw new Error(`job ${id} still ${job.status} after ${ms / 1000} s`);
    await sleep(50);
  }
}

async function hostileGlobs(base: ServerOptions, root: string, healthBudgetMs: number): Promise<Row[]> {
  const rows: Row[] = [];
  const three = path.join(root, 'three');
  fs.mkdirSync(three);
  for (const n of ['a', 'b', 'c']) fs.writeFileSync(path.join(three, `${n.repeat(200)}.txt`), 'x');
  const server = await Server.start({ ...base, env: { ...base.env, ALLOWED_DIRS: root } });
  try {
    // Warm-up: the first knowledge-base call opens the store and loads the tool's modules.
    await post(server, '/v1/collections/hostile/documents', { paths: [three], include: ['nothing-matches'] });
    const m = await measure(server, () => post(server, '/v1/collections/hostile/documents', { paths: [three], include: [HOSTILE] }));
    const a = m.value;
    const problems: string[] = [];
    if (a.status !== 400 || !/name no files/.test(a.json?.error ?? '')) problems.push(`answered ${a.status} ${a.body.slice(0, 160)}`);
    if (m.healthMaxMs > healthBudgetMs) problems.push(`/health took ${Math.round(m.healthMaxMs)} ms (budget ${healthBudgetMs})`);
    if (m.healthFailures > 0) problems.push(`${m.healthFailures} /health probes failed`);
    rows.push(row(`include ${HOSTILE} on 3 files with 200-character names`, `${a.status} ${a.code ?? ''}`.trim(), a.ms, m.healthMaxMs, problems));

    const wild = '*x'.repeat(33);
    const b = await post(server, '/v1/collections/hostile/documents', { paths: [three], include: [wild] });
    const p2 = b.status === 400 && /more than the 32 allowed/.test(b.json?.error ?? '') ? [] : [`answered ${b.status} ${b.body.slice(0, 160)}`];
    rows.push(row('include with 33 wildcards', `${b.status} ${b.code ?? ''}`.trim(), b.ms, null, p2));
  } finally {
    await server.stop();
  }
  return rows;
}

const SWAPPER = `
const fs = require('node:fs');
const [dir, link, tmp] = process.argv.slice(1);
const pause = new Int32Array(new SharedArrayBuffer(4));
process.stdout.write('ready\\n');
for (;;) {
  // 2 ms as it should be in every cycle, so submissions get through; the swap itself is as fast as it goes.
  Atomics.wait(pause, 0, 0, 2);
  fs.renameSync(dir, tmp);
  fs.renameSync(link, dir);
  fs.renameSync(dir, link);
  fs.renameSync(tmp, dir);
}`;

async function swapRace(base: ServerOptions, root: string, reads: number): Promise<Row> {
  const FILES = 100;
  const allowed = path.join(root, 'allowed');
  const outside = path.join(root, 'outside');
  const dir = path.join(allowed, 'docs');
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(outside);
  for (let i = 0; i < FILES; i++) {
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `The ${INSIDE_WORD} note number ${i}.`);
    fs.writeFileSync(path.join(outside, `f${i}.txt`), `The ${OUTSIDE_WORD} note number ${i}.`);
  }
  const link = path.join(allowed, 'swap-link');
  fs.symlinkSync(outside, link);
  const tmp = path.join(allowed, 'swap-tmp');
  const server = await Server.start({ ...base, env: { ...base.env, ALLOWED_DIRS: allowed, INGEST_CONCURRENCY: '4' } });
  let swapper: ChildProcess | null = null;
  const t0 = performance.now();
  try {
    swapper = spawn(process.execPath, ['-e', SWAPPER, dir, link, tmp], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise<void>((resolve, reject) => {
      swapper!.stdout!.once('data', () => resolve());
      swapper!.once('exit', (code) => reject(new Error(`swapper exited ${code}`)));
    });
    const paths = Array.from({ length: FILES }, (_, i) => path.join(dir, `f${i}.txt`));
    const counts = { read: 0, refused: 0, submissionsRefused: 0 };
    const worker = async () => {
      while (counts.read + counts.refused < reads) {
        const a = await post(server, '/v1/collections/race/documents', { paths });
        if (a.status !== 202) {
          // The submission itself met the swap (its paths led outside or were missing): refused, nothing read.
          counts.submissionsRefused++;
          continue;
        }
        const job = await ended(server, a.json.id);
        for (const it of job.items) {
          if (it.stage === 'done' || it.stage === 'skipped') counts.read++;
          else counts.refused++;
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    swapper.kill('SIGKILL');
    const outsideHits = await post(server, '/v1/collections/race/search', { query: OUTSIDE_WORD, mode: 'lexical', top_k: 20 });
    const insideHits = await post(server, '/v1/collections/race/search', { query: INSIDE_WORD, mode: 'lexical', top_k: 20 });
    const problems: string[] = [];
    const leaked = outsideHits.json?.results?.length ?? -1;
    if (outsideHits.status !== 200 || leaked !== 0) problems.push(`outside content searchable: ${leaked} hits (${outsideHits.status})`);
    if (insideHits.status !== 200 || !(insideHits.json?.results?.length > 0)) problems.push('the inside files were never ingested');
    return row(
      `${counts.read + counts.refused} reads while a folder is swapped with a symlink outside`,
      `${leaked} outside hits`,
      performance.now() - t0,
      null,
      problems,
      `${counts.read} read inside, ${counts.refused} refused at read time, ${counts.submissionsRefused} submissions refused`,
    );
  } finally {
    swapper?.kill('SIGKILL');
    await server.stop();
  }
}

async function sigtermDuringWalk(base: ServerOptions, root: string): Promise<Row> {
  const SHUTDOWN_S = 1;
  // 9,000 files (under the 10,000 a request may name), each looked at: a walk of seconds, then a job.
  const big = path.join(root, 'big');
  for (let d = 0; d < 100; d++) {
    const sub = path.join(big, `d${d}`);
    fs.mkdirSync(sub, { recursive: true });
    for (let i = 0; i < 90; i++) fs.writeFileSync(path.join(sub, `${'long-name-'.repeat(15)}${i}.txt`), 'x');
  }
  const server = await Server.start({ ...base, env: { ...base.env, ALLOWED_DIRS: root, SHUTDOWN_TIMEOUT: String(SHUTDOWN_S) } });
  try {
    const pending = post(server, '/v1/collections/walk/documents', { paths: [big] }, 60_000);
    await sleep(100); // the request is on its way; the walk takes longer (and its job longer still)
    const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
    const t0 = performance.now();
    server.child.kill('SIGTERM');
    const limitMs = (SHUTDOWN_S + 3 + 1) * 1000;
    const gone = await Promise.race([exited.then(() => true), sleep(limitMs + 5000).then(() => false)]);
    const ms = performance.now() - t0;
    const answer = await pending;
    const problems: string[] = [];
    if (!gone) problems.push(`still running ${Math.round(ms)} ms after SIGTERM`);
    else if (ms > limitMs) problems.push(`exited ${Math.round(ms)} ms after SIGTERM (limit ${limitMs} ms)`);
    return row('SIGTERM during a 9,000-file walk and its job', gone ? `exited ${server.child.exitCode ?? server.child.signalCode}` : 'running', ms, null, problems, `the call answered ${answer.status} ${answer.code ?? answer.failure ?? ''}`);
  } finally {
    await server.stop(1000);
  }
}

/** The group's rows; each case starts its own server on a folder of its own. */
export async function runPathCases(base: ServerOptions, reads: number, healthBudgetMs: number): Promise<Row[]> {
  const rows: Row[] = [];
  const cases: Array<[string, (root: string) => Promise<Row | Row[]>]> = [
    ['hostile globs', (root) => hostileGlobs(base, root, healthBudgetMs)],
    ['swap race', (root) => swapRace(base, root, reads)],
    ['SIGTERM during a walk', (root) => sigtermDuringWalk(base, root)],
  ];
  for (const [name, run] of cases) {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rag-paths-')));
    try {
      const out = await run(root);
      rows.push(...(Array.isArray(out) ? out : [out]));
    } catch (err) {
      rows.push(row(name, 'error', null, null, [(err as Error).message.slice(0, 300)]));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }
  return rows;
}
