/**
 * The server under test as a child process, and what each case measures about it: the answer
 * (status, code, time), the worst /health latency while the case ran (polled one request at a time)
 * and the peak RSS of the server with all its descendant processes (extraction workers count).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../free-port.ts';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI_BIN = path.join(ROOT, 'bin/rag-document-server.js');
const SOURCE_ENTRY = path.join(import.meta.dirname, 'source-server.ts');

export interface ServerOptions {
  /** Extra environment for the server (strings, as a shell would give them). */
  env?: Record<string, string>;
  /** Reuse this DATA_DIR (restart checks); a fresh one otherwise. */
  dataDir?: string;
  /** Run src/ through tsx instead of the bin (which runs dist/ when built). */
  source?: boolean;
}

/** Keeps the last bytes of the server's log so a crash can be explained without unbounded memory. */
class Tail {
  private text = '';
  constructor(private readonly max = 64 * 1024) {}
  push(s: string): void {
    this.text += s;
    if (this.text.length > this.max * 2) this.text = this.text.slice(-this.max);
  }
  toString(): string {
    return this.text.slice(-this.max);
  }
}

export class Server {
  readonly child: ChildProcess;
  readonly base: string;
  readonly dataDir: string;
  private readonly log: Tail;
  private readonly ownDir: string | null;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  private constructor(child: ChildProcess, base: string, dataDir: string, log: Tail, ownDir: string | null) {
    this.child = child;
    this.base = base;
    this.dataDir = dataDir;
    this.log = log;
    this.ownDir = ownDir;
    child.once('exit', (code, signal) => (this.exit = { code, signal }));
  }

  static async start(opts: ServerOptions = {}): Promise<Server> {
    const ownDir = opts.dataDir ? null : mkdtempSync(path.join(os.tmpdir(), 'rag-reliability-'));
    const dataDir = opts.dataDir ?? path.join(ownDir!, 'data');
    const port = await freePort();
    // tsx by absolute URL: the server's cwd is a bare temporary folder.
    const entry = opts.source ? ['--import', import.meta.resolve('tsx'), SOURCE_ENTRY] : [CLI_BIN];
    const child = spawn(process.execPath, [...entry, '--port', String(port), '--host', '127.0.0.1'], {
      // A folder without .env: the server sees only what this harness gives it.
      cwd: ownDir ?? path.dirname(dataDir),
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, RATE_LIMIT_RPM: '1000000', LOG_LEVEL: 'warn', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = new Tail();
    child.stdout!.on('data', (d) => log.push(String(d)));
    child.stderr!.on('data', (d) => log.push(String(d)));
    const server = new Server(child, `http://127.0.0.1:${port}`, dataDir, log, ownDir);
    const deadline = Date.now() + 60_000;
    for (;;) {
      let problem: string | null = null;
      if (server.exit) problem = `server exited during start-up (${JSON.stringify(server.exit)})`;
      else if (Date.now() > deadline) problem = 'server did not answer /health within 60 s';
      if (problem) {
        await server.stop(0);
        throw new Error(`${problem}: ${server.logTail()}`);
      }
      const h = await health(server.base, 1000);
      if (h.status === 200) return server;
      await sleep(100);
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  alive(): boolean {
    return this.exit === null;
  }

  logTail(chars = 2000): string {
    return this.log.toString().slice(-chars);
  }

  killHard(): Promise<void> {
    if (!this.alive()) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`; removes the DATA_DIR this harness made. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.alive()) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    if (this.ownDir) rmSync(this.ownDir, { recursive: true, force: true });
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- memory

function descendants(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        for (const c of readFileSync(`/proc/${out[i]}/task/${task}/children`, 'utf8').split(' ')) if (c.trim()) out.push(Number(c));
      } catch {
        // the task ended meanwhile
      }
    }
  }
  return out;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** RSS of the process tree now, in MB. */
export function treeRssMb(pid: number): number {
  return descendants(pid).reduce((s, p) => s + statusKb(p, 'VmRSS'), 0) / 1024;
}

/**
 * Peak RSS of a process tree over a window. Each process's high-water mark (VmHWM) is reset at
 * the start (clear_refs 5) so a spike between two samples still counts; the peak is the largest
 * sum of per-process high-water marks seen, which can only overstate (peaks of two processes
 * may not coincide), never miss one.
 */
export class RssWatch {
  private peakKb = 0;
  private readonly seen = new Map<number, number>();
  constructor(private readonly pid: number) {
    for (const p of descendants(pid)) {
      try {
        writeFileSync(`/proc/${p}/clear_refs`, '5');
      } catch {
        // not ours or gone: its VmHWM is then since its start, still an upper bound
      }
    }
    this.sample();
  }

  sample(): void {
    for (const p of descendants(this.pid)) this.seen.set(p, Math.max(this.seen.get(p) ?? 0, statusKb(p, 'VmHWM')));
    // Processes that ended keep their last high-water mark: a worker that spiked and died counts.
    let sum = 0;
    for (const v of this.seen.values()) sum += v;
    this.peakKb = Math.max(this.peakKb, sum);
  }

  get peakMb(): number {
    return this.peakKb / 1024;
  }
}

// ---------------------------------------------------------------- HTTP

export interface Answer {
  status: number;
  /** The error code of a coded error body; null for success or an uncoded body. */
  code: string | null;
  body: string;
  ms: number;
  /** Transport failure: the server reset the connection, or no answer within the client timeout. */
  failure?: 'reset' | 'hang';
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  timeoutMs: number;
}

export async function call(url: string, opts: CallOptions): Promise<Answer> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, {
      method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
      headers: opts.headers,
      // A view of the bytes, not a copy: copying a 50 MB body here would stall this process's own /health probes.
      body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : new Uint8Array(opts.body.buffer as ArrayBuffer, opts.body.byteOffset, opts.body.byteLength),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    const body = await res.text();
    let code: string | null = null;
    try {
      const j = JSON.parse(body) as { code?: unknown };
      if (j && typeof j.code === 'string') code = j.code;
    } catch {
      // not JSON
    }
    return { status: res.status, code, body, ms: performance.now() - t0 };
  } catch (err) {
    const name = (err as Error).name;
    const failure = name === 'TimeoutError' || name === 'AbortError' ? 'hang' : 'reset';
    return { status: 0, code: null, body: String((err as Error).cause ?? err), ms: performance.now() - t0, failure };
  }
}

async function health(base: string, timeoutMs: number): Promise<{ status: number; ms: number }> {
  const a = await call(`${base}/health`, { timeoutMs });
  return { status: a.status, ms: a.ms };
}

/**
 * Polls /health every `intervalMs`, one request at a time, while a case runs. A probe still
 * unanswered counts with its age so far, so a stalled event loop shows even if it never answers.
 */
export class HealthWatch {
  maxMs = 0;
  probes = 0;
  failures = 0;
  private stopped = false;
  private readonly done: Promise<void>;
  constructor(
    private readonly base: string,
    private readonly intervalMs = 25,
  ) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const h = await health(this.base, 10_000);
      this.probes++;
      this.maxMs = Math.max(this.maxMs, h.ms);
      // 503 is a valid readiness answer (a full or read-only DATA_DIR); no answer is not.
      if (h.status !== 200 && h.status !== 503) this.failures++;
      if (!this.stopped) await sleep(this.intervalMs);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

export interface Measured<T> {
  value: T;
  healthMaxMs: number;
  healthFailures: number;
  rssPeakMb: number;
}

/** Runs `fn` while /health is polled and the server's RSS is sampled. */
export async function measure<T>(server: Server, fn: () => Promise<T>): Promise<Measured<T>> {
  const rss = new RssWatch(server.pid);
  const timer = setInterval(() => rss.sample(), 20);
  const h = new HealthWatch(server.base);
  let value: T;
  try {
    value = await fn();
  } finally {
    clearInterval(timer);
    await h.stop();
    rss.sample();
  }
  return { value, healthMaxMs: h.maxMs, healthFailures: h.failures, rssPeakMb: rss.peakMb };
}

/** Whether the server still answers /health promptly after a case. */
export async function stillAlive(server: Server): Promise<boolean> {
  if (!server.alive()) return false;
  const h = await health(server.base, 5000);
  return h.status === 200 || h.status === 503;
}
