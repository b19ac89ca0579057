/**
 * Issue 19, items 5 and 6, against the real server (a child process on loopback):
 *
 * - pid reuse: a server is killed with kill -9 while its job downloads from an origin that never
 *   answers; its handle row is then given the pid of another live process (its start time stays
 *   the killed one's), as when the kernel hands the number on. A new server on the same DATA_DIR
 *   must resume the job (never leave it `running` with nobody running it), and cancelling it
 *   must end it `cancelled`, never "already ended (running)".
 * - a 0-byte kb.sqlite where collections existed: the server still starts (per-document tools
 *   work), /health is 200 with status `degraded` and a reason naming the empty file, every
 *   knowledge base call is 503 STORAGE_UNAVAILABLE, and the file is not rewritten as a new one.
 * - kb.sqlite that is not a database: /health degraded the same way.
 * A full disk mid-job is test/kb/converge-storage.test.ts (the store's writes made to fail in
 * SQLite); no disk is filled here.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { call, Server, sleep, type ServerOptions } from './harness.ts';
import type { Origin } from './origin.ts';
import type { Row } from './table.ts';

const G = 'converge';
const json = { 'content-type': 'application/json' };

interface Job {
  id: string;
  status: string;
  resumed: number;
  reason: string | null;
  counts: Record<string, number>;
}

async function send(server: Server, method: string, route: string, body?: unknown): Promise<{ status: number; json: any }> {
  const a = await call(`${server.base}${route}`, { method, ...(body === undefined ? {} : { headers: json, body: JSON.stringify(body) }), timeoutMs: 60_000 });
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(a.body);
  } catch {
    // not JSON: the status says enough
  }
  return { status: a.status, json: parsed };
}

async function until<T>(what: string, fn: () => Promise<T | null>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function row(input: string, ms: number, problems: string[], answer: string, note?: string): Row {
  return { group: G, input, bytes: null, answer, ms, healthMaxMs: null, rssPeakMb: null, pass: problems.length === 0, reason: problems.length ? problems.join('; ') : note };
}

async function pidReuse(base: ServerOptions, origin: Origin): Promise<Row> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-reliability-converge-'));
  const dataDir = path.join(root, 'data');
  const problems: string[] = [];
  const t0 = Date.now();
  let answer = '-';
  let a: Server | undefined;
  let b: Server | undefined;
  const sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
  try {
    a = await Server.start({ ...base, dataDir });
    await send(a, 'POST', '/v1/collections', { name: 'reuse' });
    const job = (await send(a, 'POST', '/v1/collections/reuse/documents', { urls: [origin.url('/stall')] })).json as Job;
    await until('the job to run', async () => ((await send(a!, 'GET', `/v1/jobs/${job.id}`)).json?.status === 'running' ? true : null));
    await a.killHard();
    // The killed server's pid now "belongs" to another live process.
    const db = new Database(path.join(dataDir, 'kb', 'kb.sqlite'));
    const owner = db.prepare('SELECT owner FROM jobs WHERE id = ?').pluck().get(job.id) as string;
    const handle = JSON.parse(db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(owner) as string) as Record<string, unknown>;
    db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(JSON.stringify({ ...handle, pid: sleeper.pid, beat: Date.now() }), owner);
    db.close();

    b = await Server.start({ ...base, dataDir });
    const seen = (await send(b, 'GET', `/v1/jobs/${job.id}`)).json as Job;
    if (seen.resumed < 1) problems.push(`after the restart the job is ${seen.status} with resumed=${seen.resumed}: not picked up`);
    const cancel = await send(b, 'POST', `/v1/jobs/${job.id}/cancel`);
    if (cancel.status !== 200) problems.push(`cancel answered ${cancel.status}: ${JSON.stringify(cancel.json).slice(0, 200)}`);
    const end = await until('the job to end', async () => {
      const j = (await send(b!, 'GET', `/v1/jobs/${job.id}`)).json as Job;
      return ['queued', 'running'].includes(j.status) ? null : j;
    });
    answer = `${end.status} (resumed ${end.resumed})`;
    if (end.status !== 'cancelled') problems.push(`the job ended ${end.status}, not cancelled`);
  } catch (err) {
    problems.push((err as Error).message.slice(0, 300));
  } finally {
    sleeper.kill('SIGKILL');
    await b?.stop();
    await a?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
  return row('kill -9 mid-job, its pid taken by a live process, restart, cancel', Date.now() - t0, problems, answer);
}

async function brokenDatabase(base: ServerOptions, kind: 'empty' | 'garbage'): Promise<Row> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-reliability-converge-'));
  const dataDir = path.join(root, 'data');
  const file = path.join(dataDir, 'kb', 'kb.sqlite');
  const problems: string[] = [];
  const t0 = Date.now();
  let answer = '-';
  let server: Server | undefined;
  try {
    server = await Server.start({ ...base, dataDir });
    const c = await send(server, 'POST', '/v1/collections', { name: 'notes' });
    if (c.status !== 201) throw new Error(`create collection answered ${c.status}`);
    await server.stop();
    if (kind === 'empty') fs.truncateSync(file, 0);
    else fs.writeFileSync(file, Buffer.alloc(16_384, 0x5a));
    server = await Server.start({ ...base, dataDir });
    const h = await send(server, 'GET', '/health');
    answer = `/health ${h.status} ${h.json?.status} kb_storage=${h.json?.checks?.kb_storage}`;
    if (h.status !== 200) problems.push(`/health answered ${h.status}`);
    if (h.json?.status !== 'degraded' || h.json?.checks?.kb_storage !== 'degraded') problems.push('/health does not say the knowledge base storage is degraded');
    const want = kind === 'empty' ? /empty/ : /not an SQLite database/;
    if (!want.test(String(h.json?.reason))) problems.push(`/health reason does not name the condition: ${String(h.json?.reason).slice(0, 200)}`);
    if (String(h.json?.reason).includes(dataDir)) problems.push('/health reason names the path');
    const list = await send(server, 'GET', '/v1/collections');
    if (list.status !== 503 || list.json?.code !== 'STORAGE_UNAVAILABLE') problems.push(`GET /v1/collections answered ${list.status} ${list.json?.code}`);
    if (kind === 'empty' && fs.statSync(file).size !== 0) problems.push('the empty file was rewritten as a new database');
  } catch (err) {
    problems.push((err as Error).message.slice(0, 300));
  } finally {
    await server?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
  const input = kind === 'empty' ? 'kb.sqlite truncated to 0 bytes after a collection existed' : 'kb.sqlite overwritten with 16 KB that is not a database';
  return row(input, Date.now() - t0, problems, answer);
}

export async function runConvergeCases(base: ServerOptions, origin: Origin): Promise<Row[]> {
  return [await pidReuse(base, origin), await brokenDatabase(base, 'empty'), await brokenDatabase(base, 'garbage')];
}
