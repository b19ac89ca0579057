/**
 * A real redis-server (Debian's package; .ci/run installs it) for the scale suite: a child process
 * on a free loopback port, no persistence (`--save '' --appendonly no`), killed on teardown. It can
 * be stopped and started again on the same port, which is how the suite takes Redis away from
 * running servers and gives it back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Teardown } from '../helper.ts';

import { freePort } from '../free-port.ts';

export { freePort };

export interface RedisServer {
  port: number;
  url: string;
  /** Stops it (SIGKILL by default: a crash, as a dead host looks to clients) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port (empty: no persistence) and waits until it accepts connections. */
  start(): Promise<void>;
}

export async function startRedisServer(t: Teardown): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  let log = '';

  const start = async () => {
    log = '';
    const c = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--protected-mode', 'yes'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    c.stdout!.on('data', (d) => (log += d));
    c.stderr!.on('data', (d) => (log += d));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start on ${port} within 10 s:\n${log}`)), 10_000);
      const onData = () => {
        if (/Ready to accept connections/.test(log)) {
          clearTimeout(timer);
          resolve();
        }
      };
      c.stdout!.on('data', onData);
      c.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`redis-server could not be run (is it installed? apt-get install redis-server): ${err.message}`));
      });
      c.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}) before it was ready:\n${log}`));
      });
    });
  };

  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  };

  await start();
  t.teardown(() => stop());
  return { port, url: `redis://127.0.0.1:${port}`, stop, start };
}
