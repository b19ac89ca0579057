/**
 * Start-up time, the way MCP clients and process managers see it: spawn the command, then
 *   - HTTP: poll GET /health until it answers 200;
 *   - stdio: write an MCP `initialize` request on stdin and wait for its answer on stdout.
 * Each is measured on the compiled server (`node bin/rag-document-server.js`, what `npm start`
 * and MCP clients run), on the TypeScript sources through tsx (what the server did before it had
 * a build), and on a bare baseline started the same way: a Fastify hello-world with one /health
 * route, and a bare MCP SDK stdio server with no tools. Runs alternate between the commands so
 * that background load hits all of them alike; medians and the ratio to the baseline are reported.
 *
 *   npm run bench:startup           # 7 runs each
 *   BENCH_QUICK=1 npm run bench:startup
 *   STARTUP_BEFORE=/tmp/old npm run bench:startup   # adds a row: a built checkout of an earlier commit
 *
 * STARTUP_BEFORE names a folder holding another checkout (e.g. `git archive <commit> | tar -x -C
 * /tmp/old`, node_modules linked, `npm run build` run there): its compiled server runs in the
 * same rounds, so a change is measured before and after on the same machine state.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, QUICK, ROOT, SectionBuilder, isMain, log, round, runStandalone } from './harness.ts';
import type { Section } from './report.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? (QUICK ? 3 : 7));
const LIMIT_S = 1.5;
/** Issue 23's goal: spawn to /health at most 1.3x the bare Fastify server's. */
const GOAL_RATIO = 1.3;
const BEFORE = process.env.STARTUP_BEFORE ? path.resolve(process.env.STARTUP_BEFORE) : undefined;
const BIN = path.join(ROOT, 'bin', 'rag-document-server.js');
const SERVER_TS = path.join(ROOT, 'src', 'server.ts');
/** The ES module build the bin ran before the start bundle (and still runs on a Node without require() of ES modules). */
const ESM_ENTRY = path.join(ROOT, 'dist', 'src', 'server.js');
const ESM_NAME = 'rag-document-server (ES module build dist/src/server.js, no code cache)';

const HELLO_HTTP = `import Fastify from 'fastify';
const app = Fastify();
app.get('/health', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
`;
const HELLO_STDIO = `import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
const server = new Server({ name: 'hello', version: '1.0.0' }, { capabilities: { tools: {} } });
await server.connect(new StdioServerTransport());
`;

interface Command {
  name: string;
  args: string[];
}


function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function childEnv(dataDir: string, port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extra };
}

/** Milliseconds from spawn to the first /health 200. */
async function timeHttp(cmd: Command, dataDir: string): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, cmd.args, { cwd: ROOT, env: childEnv(dataDir, port), stdio: ['ignore', 'ignore', 'ignore'] });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${cmd.name} exited with code ${child.exitCode} before /health answered`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`);
        await res.arrayBuffer();
        if (res.status === 200) return performance.now() - t0;
      } catch {
        // not listening yet
      }
      if (performance.now() - t0 > 60_000) throw new Error(`${cmd.name}: no /health 200 within 60 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await stop(child);
  }
}

/** Milliseconds from spawn to the answer of an MCP initialize request written at once. */
async function timeStdio(cmd: Command, dataDir: string): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, cmd.args, {
    cwd: ROOT,
    env: childEnv(dataDir, port, { MCP_TRANSPORT: 'stdio' }),
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'startup-bench', version: '1.0.0' } },
  };
  child.stdin!.write(`${JSON.stringify(init)}\n`);
  try {
    return await new Promise<number>((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new Error(`${cmd.name}: no initialize answer within 60 s`)), 60_000);
      child.stdout!.on('data', (d: Buffer) => {
        buf += d.toString('utf8');
        for (const line of buf.split('\n').slice(0, -1)) {
          try {
            const msg = JSON.parse(line) as { id?: number; result?: unknown };
            if (msg.id === 1 && msg.result) {
              clearTimeout(timer);
              resolve(performance.now() - t0);
            }
          } catch {
            // not a protocol line
          }
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${cmd.name} exited with code ${code} before answering initialize`));
      });
    });
  } finally {
    child.stdin!.end();
    await stop(child);
  }
}

/** The commit a STARTUP_BEFORE folder was made from, when it says (git archive writes none; a .commit file may). */
function beforeLabel(dir: string): string {
  const file = path.join(dir, '.commit');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().slice(0, 7) : path.basename(dir);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export async function runStartup(): Promise<Section> {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'src', 'server.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-startup-'));
  // The baselines live inside the project so that they resolve its node_modules.
  const scratch = fs.mkdtempSync(path.join(ROOT, 'data', 'startup-bench-'));
  const helloHttp = path.join(scratch, 'hello-http.mjs');
  const helloStdio = path.join(scratch, 'hello-stdio.mjs');
  fs.writeFileSync(helloHttp, HELLO_HTTP);
  fs.writeFileSync(helloStdio, HELLO_STDIO);
  const tsx = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  const b = new SectionBuilder('startup', '7. Start-up time', {
    runs: RUNS,
    order: 'commands alternate within each round',
    data_dir: 'fresh and empty per command (no models: lexical mode)',
  });
  try {
    // The baseline is always third; the optional "before" row comes last.
    const beforeBin = BEFORE ? path.join(BEFORE, 'bin', 'rag-document-server.js') : undefined;
    if (beforeBin && !fs.existsSync(path.join(BEFORE!, 'dist', 'src', 'server.js'))) throw new Error(`STARTUP_BEFORE=${BEFORE} has no dist/: run npm run build there`);
    const beforeName = `rag-document-server (compiled, before: ${BEFORE ? beforeLabel(BEFORE) : ''})`;
    const http: Command[] = [
      { name: 'rag-document-server (compiled)', args: [BIN] },
      { name: 'rag-document-server (sources via tsx)', args: [tsx, SERVER_TS] },
      { name: 'bare Fastify hello-world', args: [helloHttp] },
      { name: ESM_NAME, args: [ESM_ENTRY] },
      ...(beforeBin ? [{ name: beforeName, args: [beforeBin] }] : []),
    ];
    const stdio: Command[] = [
      { name: 'rag-document-server (compiled)', args: [BIN, '--transport', 'stdio'] },
      { name: 'rag-document-server (sources via tsx)', args: [tsx, SERVER_TS, '--transport', 'stdio'] },
      { name: 'bare MCP SDK stdio server', args: [helloStdio] },
      { name: ESM_NAME, args: [ESM_ENTRY, '--transport', 'stdio'] },
      ...(beforeBin ? [{ name: beforeName, args: [beforeBin, '--transport', 'stdio'] }] : []),
    ];
    const results = new Map<string, number[]>();
    for (let round_ = 0; round_ < RUNS; round_++) {
      for (const [kind, cmds, fn] of [
        ['http', http, timeHttp],
        ['stdio', stdio, timeStdio],
      ] as const) {
        for (const cmd of cmds) {
          const dataDir = fs.mkdtempSync(path.join(work, 'data-'));
          const ms = await fn(cmd, dataDir);
          const key = `${kind}|${cmd.name}`;
          results.set(key, [...(results.get(key) ?? []), ms]);
          log(`${kind} ${cmd.name}: ${round(ms, 0)} ms`);
        }
      }
    }
    for (const [kind, cmds, title] of [
      ['http', http, 'Spawn to first GET /health 200'],
      ['stdio', stdio, 'Spawn to MCP initialize answered over stdio'],
    ] as const) {
      const table = b.table(title, ['command', 'median s', 'min s', 'max s', 'x baseline']);
      const base = median(results.get(`${kind}|${cmds[2].name}`)!);
      for (const cmd of cmds) {
        const xs = results.get(`${kind}|${cmd.name}`)!;
        table.rows.push([cmd.name, round(median(xs) / 1000, 2), round(Math.min(...xs) / 1000, 2), round(Math.max(...xs) / 1000, 2), round(median(xs) / base, 2)]);
      }
      const ours = median(results.get(`${kind}|${cmds[0].name}`)!) / 1000;
      b.check(`${kind}: compiled server median <= ${LIMIT_S} s`, ours <= LIMIT_S, `${round(ours, 2)} s`);
      if (kind === 'http') {
        const ratio = (ours * 1000) / base;
        b.check(`http: compiled server <= ${GOAL_RATIO}x bare Fastify (issue 23)`, ratio <= GOAL_RATIO, `${round(ratio, 2)}x`);
      }
    }
    b.note(
      'Not on the path to the first /health 200: the language model and the MCP SDK load once the server has answered its first request ' +
        '(plugins/warm-up.ts; a call that needs one before that loads it at once), the OpenAPI document (@fastify/swagger), Swagger UI and ' +
        "the console's static files on their first request, the site crawler, YAML key files, the extractors and legacy-charset tables on first use.",
    );
    b.note(
      '"compiled" is the bin: the start bundle dist/server.cjs with its V8 code cache (bin/cached-bundle.js), so a start deserializes ' +
        'the functions it runs instead of compiling them; the ES module build is the same code as chunks Node compiles at every start.',
    );
    if (BEFORE) b.note(`"before" is the checkout in ${BEFORE} (${beforeLabel(BEFORE)}), built there and run in the same rounds.`);
    b.note(`Load average at the end: ${os.loadavg().map((x) => round(x, 2)).join(', ')} on ${os.cpus().length} cores.`);
    return b.finish();
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await runStandalone(runStartup);
