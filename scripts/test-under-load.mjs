// `npm run test:under-load`: runs a command (default `npm test`) while busy-loop processes keep
// every core saturated, as on a laptop that is building something else. The suite must pass like
// this: no test may depend on the machine being idle (they wait on events or poll with generous
// deadlines). `.ci/run` runs the README's `npm test` through it.
//
//   node scripts/test-under-load.mjs [command ...]     default: npm test
//   HOGS=n    busy-loop processes (default: one per core)
//
// The hogs run at normal priority (a niced hog would yield to the tests and prove nothing), are
// killed when the command ends or this script is interrupted, and die on their own if this
// script dies (each polls its parent).
import { spawn } from 'node:child_process';
import os from 'node:os';

const command = process.argv.slice(2);
const [cmd, ...args] = command.length > 0 ? command : ['npm', 'test'];
const cores = os.availableParallelism?.() ?? os.cpus().length;
const hogCount = Number.parseInt(process.env.HOGS ?? String(cores), 10);
if (!Number.isInteger(hogCount) || hogCount < 0) {
  console.error(`HOGS must be a whole number (got ${JSON.stringify(process.env.HOGS)})`);
  process.exit(2);
}

// A hog spins for ~100 ms at a time, then checks that its parent still lives.
const HOG = `const parent = ${process.pid};
for (;;) {
  const until = Date.now() + 100;
  while (Date.now() < until);
  try { process.kill(parent, 0); } catch { process.exit(0); }
}`;
const hogs = Array.from({ length: hogCount }, () => spawn(process.execPath, ['-e', HOG], { stdio: 'ignore' }));
const stopHogs = () => {
  for (const h of hogs) if (h.exitCode === null) h.kill('SIGKILL');
};
console.log(`test:under-load: ${hogCount} busy-loop process(es) on ${cores} core(s), running: ${[cmd, ...args].join(' ')}`);

const started = Date.now();
const child = spawn(cmd, args, { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    child.kill(signal);
    stopHogs();
  });
}
child.on('error', (err) => {
  stopHogs();
  console.error(`test:under-load: could not start ${cmd}: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  stopHogs();
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  console.log(`test:under-load: ${[cmd, ...args].join(' ')} ended (${signal ?? `exit ${code}`}) after ${minutes} min with ${hogCount} hog(s)`);
  process.exit(code ?? 1);
});
