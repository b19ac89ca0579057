/**
 * `npm run demo`: everything the README's examples need, on this machine, without internet.
 *
 * 1. Writes sample documents (PDF, Word, PowerPoint, Excel, CSV, a photographed page, Markdown,
 *    HTML) into data/demo/files (scripts/demo/sample-files.ts).
 * 2. Serves that folder on http://127.0.0.1:8090 (scripts/demo/file-server.ts).
 * 3. Starts the server (bin/rag-document-server.js, as `npm start` does) on 127.0.0.1:8000 with
 *    ALLOWED_HOSTS=127.0.0.1:8090, so those loopback URLs are allowed (the default address policy
 *    refuses them), and ALLOWED_DIRS=data/demo/files for the knowledge base's local paths. Its
 *    state is data/demo/server, started afresh each run; models are read from MODELS_DIR, else
 *    data/models (the default server's). No API keys: it listens on loopback only.
 * 4. Prints curl commands for every tool (scripts/demo/commands.ts), then serves until Ctrl-C.
 *
 * Options: --port N (server, default 8000), --files-port N (default 8090; 0: any free port, as
 * for either), --dir DIR (default data/demo), --check (send every printed command, report each,
 * stop; exit 1 when one fails). The OpenAPI document's `*_offline` examples assume the defaults.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../src/project-root.ts';
import { DEMO_FILES_PORT } from '../src/tools/examples.ts';
import { curlBlock, DEMO_COMMANDS, runCommand, toCurl, type DemoVars } from './demo/commands.ts';
import { startFileServer } from './demo/file-server.ts';
import { writeDemoFiles } from './demo/sample-files.ts';

const USAGE = 'usage: npm run demo -- [--port 8000] [--files-port 8090] [--dir data/demo] [--check]';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8000' },
    'files-port': { type: 'string', default: String(DEMO_FILES_PORT) },
    dir: { type: 'string', default: path.join(PROJECT_ROOT, 'data', 'demo') },
    check: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const port = (name: string, v: string) => {
  if (!/^\d+$/.test(v) || Number(v) > 65535) {
    process.stderr.write(`demo: --${name} must be a port number (got ${JSON.stringify(v)})\n${USAGE}\n`);
    process.exit(2);
  }
  return Number(v);
};
const serverPort = port('port', values.port);
const filesPort = port('files-port', values['files-port']);
const demoDir = path.resolve(values.dir);
const filesDir = path.join(demoDir, 'files');
const stateDir = path.join(demoDir, 'server');
const logFile = path.join(demoDir, 'server.log');

const say = (s: string) => process.stdout.write(`${s}\n`);

/** A comma-separated setting with one more entry. */
const plus = (list: string | undefined, entry: string) => [...(list ?? '').split(',').map((s) => s.trim()).filter(Boolean), entry].join(',');

/** Starts the server; resolves with its address once it listens, rejects when it exits first. */
function startServer(filesHost: string): Promise<{ child: ChildProcess; base: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(serverPort),
    ALLOWED_HOSTS: plus(process.env.ALLOWED_HOSTS, filesHost),
    ALLOWED_DIRS: plus(process.env.ALLOWED_DIRS, filesDir),
    DATA_DIR: stateDir,
    MODELS_DIR: process.env.MODELS_DIR || path.join(PROJECT_ROOT, 'data', 'models'),
    // The printed commands carry no key; the server listens on loopback only.
    API_KEYS: '',
    API_KEYS_FILE: '',
    MCP_TRANSPORT: 'http',
  };
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'rag-document-server.js')], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log = createWriteStream(logFile);
  let seen = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      log.write(d);
      if (seen.length < 1_000_000) seen += d.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (m) resolve({ child, base: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening; its log (${logFile}):\n${seen.slice(-4000)}`)));
  });
}

async function main(): Promise<number> {
  say(`Writing sample documents to ${filesDir}`);
  await rm(stateDir, { recursive: true, force: true });
  await mkdir(demoDir, { recursive: true });
  const written = await writeDemoFiles(filesDir);
  say(`  ${written.join(', ')}`);

  const files = await startFileServer(filesDir, filesPort);
  say(`Serving them on ${files.origin}`);
  const filesHost = `127.0.0.1:${files.port}`;
  say(`Starting the server with ALLOWED_HOSTS=${filesHost} and ALLOWED_DIRS=${filesDir} (log: ${logFile})`);
  let server: { child: ChildProcess; base: string };
  try {
    server = await startServer(filesHost);
  } catch (err) {
    await files.close();
    process.stderr.write(`${(err as Error).message}\n`);
    return 1;
  }
  const stop = async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      const exited = new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      await exited;
    }
    await files.close();
  };
  const vars: DemoVars = { base: server.base, files: files.origin, dir: filesDir };
  say(`Server listening at ${server.base} (Swagger UI: ${server.base}/docs, the console: ${server.base}/console)\n`);
  say('Paste these into a shell (the variables first):\n');
  say(curlBlock(vars));
  say('\n# watch a job (its id is in the answers above): curl -N $BASE/v1/jobs/JOB_ID/events');

  if (values.check) {
    say('\nChecking every command:');
    let failed = 0;
    for (const c of DEMO_COMMANDS) {
      const outcome = await runCommand(c, vars).catch((err: unknown) => ({ command: c, status: 0, problem: String(err) }));
      if (outcome.problem) failed++;
      say(`${outcome.problem ? 'FAIL' : 'ok  '} ${outcome.status} ${toCurl(c)}${outcome.problem ? `\n     ${outcome.problem}` : ''}`);
    }
    say(failed === 0 ? `\nAll ${DEMO_COMMANDS.length} commands answered as expected.` : `\n${failed} of ${DEMO_COMMANDS.length} commands failed.`);
    await stop();
    return failed === 0 ? 0 : 1;
  }

  say('\nServing until Ctrl-C.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
    server.child.once('exit', () => resolve());
  });
  await stop();
  return 0;
}

process.exitCode = await main();
