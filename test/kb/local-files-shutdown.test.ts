/**
 * The shutdown deadline (src/hard-exit.ts) in real processes: a stop that never finishes ends
 * with exit status 1 from the main-thread timer, and a main thread stuck in synchronous work (what
 * a backtracking glob did) is still ended, by the worker thread's SIGKILL. Waits on the child's
 * exit event only (the tap timeout bounds it), never on elapsed time.
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import t, { type Test } from 'tap';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';

const MODULE = pathToFileURL(path.resolve(import.meta.dirname, '../../src/hard-exit.ts')).href;

function runChild(t: Test, body: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }> {
  const source = `import { armHardExit } from ${JSON.stringify(MODULE)};\n${body}`;
  const child = spawn(process.execPath, [...SOURCE_LOADER_ARGS, '--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, stdout })));
}

t.test('a stop that never finishes: exit status 1 from the main-thread timer', async (t) => {
  const r = await runChild(t, `
    armHardExit(200, () => process.stdout.write('expired\\n'));
    setInterval(() => {}, 1000); // a handle that would keep the process alive forever
    await new Promise(() => {}); // the stop, stuck
  `);
  t.equal(r.code, 1);
  t.equal(r.stdout, 'expired\n', 'the expiry was reported before exiting');
});

t.test('a main thread blocked in synchronous work: SIGKILL from the worker thread', async (t) => {
  const r = await runChild(t, `
    armHardExit(200, () => process.stdout.write('main timer ran\\n'));
    process.stdout.write('blocking\\n');
    // Nothing on the main thread runs again (for two minutes, so a failing test leaves no spinner).
    const end = Date.now() + 120_000;
    while (Date.now() < end) {}
    process.stdout.write('survived\\n');
  `);
  t.equal(r.signal, 'SIGKILL');
  t.equal(r.stdout, 'blocking\n', 'the main-thread timer never got to run');
});

t.test('a stop that finishes in time exits as usual', async (t) => {
  const r = await runChild(t, `
    const h = armHardExit(60_000);
    process.stdout.write('done\\n');
  `);
  t.equal(r.code, 0, 'the unref\'ed timers do not hold the process');
  t.equal(r.stdout, 'done\n');
});
