/**
 * `npm run demo` (scripts/demo.ts) as a user runs it, offline: it writes its sample files, serves
 * them over loopback, starts the real server allowed to fetch them, and prints curl commands that
 * work when pasted into a shell (each run through bash and checked as `--check` checks it, whose
 * requests are sent too). The README's offline block is exactly what it prints. Ports are free
 * ones (0); only loopback is contacted.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { curlBlock, DEMO_COMMANDS, runCommand, toCurl } from '../../scripts/demo/commands.ts';
import { DEMO_FILES_ORIGIN } from '../../src/tools/examples.ts';
import { tempDir } from '../helper.ts';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEMO = path.join(ROOT, 'scripts/demo.ts');
const run = promisify(execFile);

/** Spawns the demo; `output()` is what it printed so far. */
function startDemo(t: Parameters<typeof tempDir>[0], args: string[]) {
  const dir = tempDir(t, 'rag-demo-');
  const child = spawn(process.execPath, [...SOURCE_LOADER_ARGS, DEMO, '--port', '0', '--files-port', '0', '--dir', dir, ...args], {
    cwd: ROOT,
    // A clean environment: nothing of this machine's settings leaks in.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const printed = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const look = () => {
        const m = pattern.exec(out);
        if (m) resolve(m);
        return m;
      };
      if (look()) return;
      child.stdout.on('data', look);
      void exited.then(() => look() ?? reject(new Error(`the demo exited without printing ${pattern}:\n${out}`)));
    });
  return { child, dir, exited, printed, output: () => out };
}

t.test('the printed commands work pasted into a shell, and Ctrl-C stops everything', { skip: !hasCurl() && 'no curl on PATH' }, async (t) => {
  const demo = startDemo(t, []);
  await demo.printed(/Serving until Ctrl-C\./);
  const vars = Object.fromEntries(['BASE', 'D', 'DEMO'].map((name) => [name, new RegExp(`^${name}=(\\S+)$`, 'm').exec(demo.output())![1]!]));
  t.match(vars.BASE, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.match(vars.D, /^http:\/\/127\.0\.0\.1:\d+$/);
  const printedLines = demo.output().split('\n');
  for (const command of DEMO_COMMANDS) {
    const line = toCurl(command);
    t.ok(printedLines.includes(line), `printed: ${line}`);
    // Exactly the printed line, with the status written after the body.
    const { stdout } = await run('bash', ['-c', `BASE=${vars.BASE}; D=${vars.D}; DEMO=${vars.DEMO}; ${line} -w '\\n%{http_code}'`], { maxBuffer: 64 * 1024 * 1024 });
    const cut = stdout.lastIndexOf('\n');
    const status = Number(stdout.slice(cut + 1));
    t.equal(status, command.status, `${line}: ${stdout.slice(0, 300)}`);
    // The checks --check applies (the OCR and the PDF read their words, the spreadsheet finds its row, jobs succeed).
    t.equal(command.check?.(JSON.parse(stdout.slice(0, cut)) as Record<string, unknown>) ?? null, null, `${line}: the answer is right`);
  }
  // --check sends the same commands itself (runCommand); the read-only ones again, on this demo.
  const demoVars = { base: vars.BASE!, files: vars.D!, dir: vars.DEMO! };
  for (const command of DEMO_COMMANDS.filter((c) => c.section !== 'knowledge base')) {
    const outcome = await runCommand(command, demoVars);
    t.equal(outcome.problem, null, `--check's request: ${toCurl(command)}`);
  }
  const check = await run(process.execPath, [...SOURCE_LOADER_ARGS, DEMO, '--help'], { cwd: ROOT });
  t.match(check.stdout, /--check/, '--help names --check');
  demo.child.kill('SIGINT');
  t.equal(await demo.exited, 0, 'Ctrl-C ends the demo cleanly');
  await t.rejects(fetch(`${vars.D}/agents.pdf`), 'the file server is closed');
  await t.rejects(fetch(`${vars.BASE}/health`), 'the server is stopped');
});

t.test("the README's offline block is the demo's own, with the default ports", async (t) => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  t.equal(DEMO_FILES_ORIGIN, 'http://127.0.0.1:8090', 'the OpenAPI offline examples and the README name the same file server');
  const block = curlBlock({ base: 'http://127.0.0.1:8000', files: DEMO_FILES_ORIGIN, dir: '$PWD/data/demo/files' });
  for (const line of block.split('\n').filter((l) => l.startsWith('curl '))) t.ok(readme.includes(`\n${line}\n`), `README has: ${line}`);
  t.match(readme, 'npm run demo');
});

function hasCurl(): boolean {
  return spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;
}
