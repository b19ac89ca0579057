/**
 * The request path against its floor: the same work through our app and through a bare Fastify
 * server, both compiled the way `npm start` runs them and started as their own processes.
 *   - `detect_language` over HTTP (POST /v1/language/detect, keep-alive, N connections, autocannon)
 *     vs a bare Fastify route calling the same library (eld/small): req/s and the ratio;
 *     and vs the same bare route calling our own detectLanguage (the same work as the tool);
 *   - spawn to the first GET /health 200: our server vs a bare Fastify server with one route.
 * Runs alternate between the two so background load hits both alike; medians are reported.
 *
 * Our server is bundled from the current sources into a scratch folder as scripts/build.mjs
 * bundles it (bundle-like-build.ts), so the numbers are those of this tree, not of a stale dist/.
 *
 *   npm run bench:request-path
 *   BENCH_QUICK=1 npm run bench:request-path     # fewer and shorter rounds
 *   BENCH_CONNECTIONS=8 BENCH_LOG_LEVEL=info ...  # connections; the server's LOG_LEVEL (warn by default)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { bundleLikeBuild as bundle } from './bundle-like-build.ts';
import { freePort, QUICK, ROOT, isMain, log, round } from './harness.ts';

const ROUNDS = Number(process.env.BENCH_RUNS ?? (QUICK ? 3 : 5));
const SPAWN_RUNS = Number(process.env.BENCH_SPAWN_RUNS ?? (QUICK ? 3 : 7));
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? (QUICK ? 3 : 5));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'warn';
const GOAL_RPS_RATIO = 0.8;
const GOAL_SPAWN_RATIO = 1.3;
const TEXT = 'Ceci est un petit texte en français pour montrer la détection de la langue.';

const BARE = `import Fastify from 'fastify';
import { eld } from 'eld/small';
const app = Fastify();
app.get('/health', async () => ({ status: 'ok' }));
app.post('/v1/language/detect', async (request) => {
  const r = eld.detect(request.body.text);
  return { language_code: r.language, language_name: r.language, confidence: r.isReliable() ? 0.9 : 0.3 };
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
`;

/** The same bare server, its route calling our own detectLanguage (src/language/detect.ts): the same work as the tool. */
const BARE_SAME_WORK = (detectModule: string) => `import Fastify from 'fastify';
import { detectLanguage } from ${JSON.stringify(detectModule)};
const app = Fastify();
app.get('/health', async () => ({ status: 'ok' }));
app.post('/v1/language/detect', async (request) => detectLanguage(request.body.text));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
`;

async function bundleServer(outdir: string): Promise<string> {
  await bundle(['src/server.ts', 'src/retrieval/embedders/onnx-worker.ts', 'src/extraction/extract-child.ts'], outdir);
  const entry = path.join(outdir, 'entry.mjs');
  fs.writeFileSync(entry, `import { main } from './src/server.js';\nawait main(process.argv.slice(2));\n`);
  return entry;
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

interface Started {
  child: ChildProcess;
  port: number;
  ms: number;
}

/** Spawns `file` and polls /health until 200; resolves with the milliseconds it took. */
async function start(file: string, dataDir: string): Promise<Started> {
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL,
    // Every call is counted by the limiter, none is refused: the budget is the limiter's cost, not its answer.
    RATE_LIMIT_RPM: '1000000',
  };
  const t0 = performance.now();
  const child = spawn(process.execPath, [file], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${file} exited with code ${child.exitCode} before /health answered`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      await res.arrayBuffer();
      if (res.status === 200) return { child, port, ms: performance.now() - t0 };
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 60_000) {
      await stop(child);
      throw new Error(`${file}: no /health 200 within 60 s`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** User + system CPU seconds the process has used (Linux /proc; 0 elsewhere). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Server CPU microseconds per answered request: robust to other load on the machine, unlike req/s. */
  cpuUs: number;
}

async function cannon(port: number, duration: number, pid?: number): Promise<LoadResult> {
  const cpu0 = cpuSeconds(pid);
  const r = await autocannon({
    url: `http://127.0.0.1:${port}/v1/language/detect`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: TEXT }),
    connections: CONNECTIONS,
    duration,
  });
  const cpuUs = r.requests.total > 0 ? ((cpuSeconds(pid) - cpu0) * 1e6) / r.requests.total : 0;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, cpuUs };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export async function runRequestPath(): Promise<{ rpsRatio: number; sameRatio: number; spawnRatio: number }> {
  const scratch = fs.mkdtempSync(path.join(ROOT, 'data', 'request-path-bench-'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-request-path-'));
  try {
    const bare = path.join(scratch, 'bare.mjs');
    fs.writeFileSync(bare, BARE);
    log('bundling the server from the sources');
    const ours = await bundleServer(path.join(scratch, 'build'));
    const sameSource = path.join(scratch, 'bare-same-work.ts');
    fs.writeFileSync(sameSource, BARE_SAME_WORK(path.join(ROOT, 'src', 'language', 'detect.ts')));
    await bundle([path.relative(ROOT, sameSource)], path.join(scratch, 'bare-build'));
    const bareSame = path.join(scratch, 'bare-build', path.relative(ROOT, scratch), 'bare-same-work.js');
    const servers = [
      { name: 'rag-document-server', file: ours },
      { name: 'bare Fastify', file: bare },
    ];
    const loadServers = [...servers, { name: 'bare Fastify + our detectLanguage', file: bareSame }];

    const spawnMs = new Map<string, number[]>();
    for (let i = 0; i < SPAWN_RUNS; i++) {
      for (const s of servers) {
        const started = await start(s.file, fs.mkdtempSync(path.join(work, 'data-')));
        await stop(started.child);
        spawnMs.set(s.name, [...(spawnMs.get(s.name) ?? []), started.ms]);
        log(`spawn -> /health ${s.name}: ${round(started.ms, 0)} ms`);
      }
    }

    const rps = new Map<string, LoadResult[]>();
    const running = await Promise.all(loadServers.map(async (s) => ({ ...s, started: await start(s.file, fs.mkdtempSync(path.join(work, 'data-'))) })));
    try {
      // Warm-up: the model loads on the first call; JIT settles.
      for (const s of running) await cannon(s.started.port, 1);
      for (let i = 0; i < ROUNDS; i++) {
        for (const s of running) {
          const r = await cannon(s.started.port, DURATION_S, s.started.child.pid);
          rps.set(s.name, [...(rps.get(s.name) ?? []), r]);
          log(`detect_language ${s.name}: ${round(r.rps, 0)} req/s, p50 ${r.p50} ms, ${round(r.cpuUs, 0)} us CPU/request, non-2xx ${r.non2xx}`);
        }
      }
    } finally {
      await Promise.all(running.map((s) => stop(s.started.child)));
    }

    const oursRps = median(rps.get(servers[0].name)!.map((r) => r.rps));
    const bareRps = median(rps.get(servers[1].name)!.map((r) => r.rps));
    const oursSpawn = median(spawnMs.get(servers[0].name)!);
    const bareSpawn = median(spawnMs.get(servers[1].name)!);
    const sameRps = median(rps.get(loadServers[2].name)!.map((r) => r.rps));
    const cpu = (i: number) => median(rps.get(loadServers[i].name)!.map((r) => r.cpuUs));
    const rpsRatio = oursRps / bareRps;
    const sameRatio = oursRps / sameRps;
    const spawnRatio = oursSpawn / bareSpawn;
    const errors = rps.get(servers[0].name)!.reduce((n, r) => n + r.non2xx, 0);
    const lines = [
      `## Request path vs bare Fastify (${CONNECTIONS} keep-alive connections, ${ROUNDS} x ${DURATION_S} s, LOG_LEVEL=${LOG_LEVEL}; spawn ${SPAWN_RUNS} runs)`,
      '',
      '| measure | rag-document-server | bare Fastify | ratio | goal |',
      '|---|---|---|---|---|',
      `| detect_language req/s (median) | ${round(oursRps, 0)} | ${round(bareRps, 0)} | ${round(rpsRatio, 2)}x | >= ${GOAL_RPS_RATIO}x |`,
      `| detect_language req/s vs a bare route calling our detectLanguage (the floor: reported) | ${round(oursRps, 0)} | ${round(sameRps, 0)} | ${round(sameRatio, 2)}x | |`,
      `| server CPU us per request (median; same-work bare in brackets) | ${round(cpu(0), 0)} | ${round(cpu(1), 0)} (${round(cpu(2), 0)}) | ${round(cpu(0) / cpu(1), 2)}x (${round(cpu(0) / cpu(2), 2)}x) | |`,
      `| detect_language p50 ms | ${median(rps.get(servers[0].name)!.map((r) => r.p50))} | ${median(rps.get(servers[1].name)!.map((r) => r.p50))} | | |`,
      `| spawn -> /health ms (median) | ${round(oursSpawn, 0)} | ${round(bareSpawn, 0)} | ${round(spawnRatio, 2)}x | <= ${GOAL_SPAWN_RATIO}x |`,
      '',
      `non-2xx answers from our server: ${errors}. Load average at the end: ${os.loadavg().map((x) => round(x, 2)).join(', ')} on ${os.cpus().length} cores.`,
      `${rpsRatio >= GOAL_RPS_RATIO ? 'PASS' : 'FAIL'} req/s ratio ${round(rpsRatio, 2)} (goal >= ${GOAL_RPS_RATIO})`,
      `${spawnRatio <= GOAL_SPAWN_RATIO ? 'PASS' : 'FAIL'} spawn ratio ${round(spawnRatio, 2)} (goal <= ${GOAL_SPAWN_RATIO})`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return { rpsRatio, sameRatio, spawnRatio };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  runRequestPath().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
