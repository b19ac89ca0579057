/**
 * --workers N: a worker that dies is logged by the primary with its own pid in `worker_pid`
 * (`pid` is pino's base field, the primary's), and restarted.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helper.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/rag-document-server.js');

interface LogLine {
  pid?: number;
  worker_pid?: number;
  msg?: string;
  [key: string]: unknown;
}

t.test('worker exit: logged once with worker_pid, then a new worker is started', async (t) => {
  const cwd = tempDir(t);
  const child = spawn(process.execPath, [BIN, '--workers', '2', '--port', '0', '--host', '127.0.0.1'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const lines: LogLine[] = [];
  let buffer = '';
  child.stderr.on('data', (d: Buffer) => {
    buffer += d.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    for (const l of parts) if (l.trim()) lines.push(JSON.parse(l) as LogLine);
  });
  const waitFor = async (check: () => boolean, what: string) => {
    const end = Date.now() + 60_000;
    while (!check()) {
      if (Date.now() > end || child.exitCode !== null) throw new Error(`${what}: ${JSON.stringify(lines)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const listening = () => lines.filter((l) => /^Server listening/.test(l.msg ?? ''));
  await waitFor(() => listening().length >= 2, 'two workers listening');
  const workerPids = [...new Set(listening().map((l) => l.pid!))];
  t.equal(workerPids.length, 2);
  t.notOk(workerPids.includes(child.pid!), 'workers are processes of their own');

  const victim = workerPids[0];
  process.kill(victim, 'SIGKILL');
  await waitFor(() => lines.some((l) => l.msg === 'worker exited'), 'the exit logged');
  const exited = lines.filter((l) => l.msg === 'worker exited');
  t.equal(exited.length, 1);
  t.match(exited[0], { pid: child.pid, worker_pid: victim, signal: 'SIGKILL', code: null });
  await waitFor(() => listening().length >= 3, 'a replacement worker');

  const code = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  child.kill('SIGTERM');
  t.equal(await code, 0);
});
