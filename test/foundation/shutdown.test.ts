/** The CLI over HTTP: starts, serves, and on SIGTERM stops accepting, closes and exits 0. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helper.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/rag-document-server.js');

t.test('SIGTERM: graceful stop, exit 0', async (t) => {
  const cwd = tempDir(t);
  const child = spawn(process.execPath, [BIN, '--port', '0', '--host', '127.0.0.1'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const address = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    child.once('exit', () => reject(new Error(`exited early: ${stderr}`)));
  });
  const res = await fetch(`${address}/v1/system/health`, { headers: { 'x-request-id': 'cli-1' } });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-request-id'), 'cli-1');

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.equal(await exited, 0);
  const events = stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event?: string; request_id?: string });
  t.ok(events.some((e) => e.event === 'tool.success' && e.request_id === 'cli-1'), 'the call was logged with its id');
  t.ok(events.some((e) => e.event === 'server.stop'));
  t.ok(events.some((e) => e.event === 'server.stopped'));
  t.equal(stdout, '', 'nothing on stdout');
});
