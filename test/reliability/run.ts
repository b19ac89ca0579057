/**
 * `npm run test:reliability [-- options]`: hostile inputs against the real server (a child
 * process on loopback), one table, exit status 1 when any row fails.
 *
 *   --short             the CI pass: fewer mutants and load calls, short origin timeouts
 *   --seed N            fuzzer seed (default 1)
 *   --count N           mutants (default 400; 40 with --short)
 *   --calls N           load-run calls (default 10,000; 1,000 with --short)
 *   --only a,b          groups: bomb, fuzz, origin, kill, load, stream, order, converge (default all)
 *   --source            run src/ through tsx instead of building dist/
 *   --env KEY=VALUE     extra server environment (repeatable), e.g. --env EXTRACT_CONCURRENCY=2
 *   --health-ms N       /health budget per case (default 250)
 *   --rss-mb N          RSS ceiling of the server's process tree (default 1536)
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bombCases } from './bomb-cases.ts';
import { runCase, type Ctx, type Limits } from './cases.ts';
import { runDurability } from './durability.ts';
import { corpusSources, generatedSources, runFuzz } from './fuzz.ts';
import { call, measure, Server, sleep, type ServerOptions } from './harness.ts';
import { runLoad } from './load.ts';
import { Origin } from './origin.ts';
import { originCases } from './origin-cases.ts';
import { runOrderCases } from './order-cases.ts';
import { runPathCases } from './path-cases.ts';
import { runConvergeCases } from './converge-cases.ts';
import { renderTable, type Row } from './table.ts';
import { runStreamCases, STREAM_GROUP_ENV } from './stream-cases.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const GROUPS = ['bomb', 'fuzz', 'origin', 'kill', 'load', 'stream', 'order', 'converge', 'paths'] as const;
type Group = (typeof GROUPS)[number];

const { values } = parseArgs({
  options: {
    short: { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    count: { type: 'string' },
    calls: { type: 'string' },
    only: { type: 'string' },
    source: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
    'health-ms': { type: 'string', default: '250' },
    'rss-mb': { type: 'string', default: '1536' },
  },
});

const positiveInt = (name: string, v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer (got ${v})`);
  return n;
};

const short = values.short!;
const seed = positiveInt('seed', values.seed!);
const count = positiveInt('count', values.count ?? (short ? '40' : '400'));
const calls = positiveInt('calls', values.calls ?? (short ? '1000' : '10000'));
const only = new Set<Group>((values.only ? values.only.split(',') : GROUPS).map((g) => g.trim() as Group));
for (const g of only) if (!GROUPS.includes(g)) throw new Error(`--only: unknown group ${g} (groups: ${GROUPS.join(', ')})`);
const extraEnv = Object.fromEntries(
  values.env!.map((kv) => {
    const i = kv.indexOf('=');
    if (i <= 0) throw new Error(`--env wants KEY=VALUE (got ${kv})`);
    return [kv.slice(0, i), kv.slice(i + 1)];
  }),
);
const limits: Limits = { healthBudgetMs: positiveInt('health-ms', values['health-ms']!), rssCeilingMb: positiveInt('rss-mb', values['rss-mb']!), callTimeoutMs: 0 };

const log = (s: string) => process.stderr.write(`[reliability] ${s}\n`);

if (!values.source) {
  log('npm run build');
  const b = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (b.status !== 0) throw new Error('npm run build failed');
}

const t0 = Date.now();
const origin = await new Origin().listen();
const rows: Row[] = [];
/** /health max over 2 idle seconds after each server start: what the machine itself adds. */
const idleHealth: number[] = [];
// A row that stalls costs at most REQUEST_TIMEOUT (then 504 TIMEOUT, a failed row); the client waits 30 s longer for a hang.
const requestTimeout = short ? 30 : 120;
/** The server's default timeout of document tools (README, "Timeouts per class"). */
const DOCUMENT_CLASS_TIMEOUT_S = 300;
limits.callTimeoutMs = (requestTimeout + 30) * 1000;
const base: ServerOptions = { source: values.source, env: { ALLOWED_HOSTS: origin.host, REQUEST_TIMEOUT: String(requestTimeout), ...extraEnv } };

/**
 * Runs a group on a fresh server. A group that cannot run (the server does not start, a warm-up
 * call fails) is one failed row, and the other groups still run.
 */
async function withServer(group: string, options: ServerOptions, fn: (ctx: Ctx) => Promise<void>, caseLimits = limits): Promise<void> {
  let ctx: Ctx | undefined;
  try {
    ctx = { server: await Server.start(options), serverOptions: options, limits: caseLimits };
    await warmUp(ctx.server);
    const idle = await measure(ctx.server, () => sleep(2000));
    idleHealth.push(Math.round(idle.healthMaxMs));
    await fn(ctx);
  } catch (err) {
    report({ group, input: 'the group could not run', bytes: null, answer: 'error', ms: null, healthMaxMs: null, rssPeakMb: null, pass: false, reason: (err as Error).message.slice(0, 400) });
  } finally {
    await ctx?.server.stop();
  }
}

/** One ordinary call first, so loading the extractors and language data is not charged to the first row. */
async function warmUp(server: Server): Promise<void> {
  const a = await call(`${server.base}/v1/documents/process`, {
    headers: { 'content-type': 'text/plain' },
    body: 'A short warm-up document about the harbour and its cranes.',
    timeoutMs: 120_000,
  });
  if (a.status !== 200) throw new Error(`warm-up process_document answered ${a.status}: ${a.body.slice(0, 200)}`);
  const url = origin.add('warm-up.txt', { bytes: Buffer.from('The first download loads the HTTP client.\n'), contentType: 'text/plain' });
  const d = await call(`${server.base}/v1/documents/process`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ document_url: url }), timeoutMs: 120_000 });
  if (d.status !== 200) throw new Error(`warm-up download answered ${d.status}: ${d.body.slice(0, 200)}`);
}

function report(row: Row): void {
  rows.push(row);
  log(`${row.pass ? 'pass' : 'FAIL'}  [${row.group}] ${row.input}  ${row.answer}  ${row.ms === null ? '-' : Math.round(row.ms)} ms  health ${row.healthMaxMs === null ? '-' : Math.round(row.healthMaxMs)} ms  rss ${row.rssPeakMb === null ? '-' : Math.round(row.rssPeakMb)} MB`);
}

try {
  if (only.has('bomb')) {
    // Legitimate big inputs (the 95 MB text, 100,000 PDF pages) get the server's own timeouts
    // (no REQUEST_TIMEOUT: the document class's 300 s), not the shortened ones of the other groups.
    const { REQUEST_TIMEOUT: _short, ...bombEnv } = base.env ?? {};
    await withServer(
      'bomb',
      { ...base, env: bombEnv },
      async (ctx) => {
        for (const c of bombCases(origin)) report(await runCase(ctx, c));
      },
      { ...limits, callTimeoutMs: (DOCUMENT_CLASS_TIMEOUT_S + 30) * 1000 },
    );
  }
  if (only.has('fuzz')) {
    const gen = await generatedSources();
    const corpus = corpusSources(short ? 1 : 3);
    log(`fuzz: seed ${seed}, ${count} mutants of ${gen.length} generated files${corpus.dir ? ` and ${corpus.sources.length} corpus files (${corpus.dir})` : ' (no corpus found)'}`);
    await withServer('fuzz', base, async (ctx) => {
      for (const r of await runFuzz(ctx, [...gen, ...corpus.sources], seed, count)) report(r);
    });
  }
  if (only.has('origin')) {
    // A short REQUEST_TIMEOUT bounds the origins that never finish; the client waits a little longer.
    const timeout = short ? 6 : 15;
    const options = { ...base, env: { ...base.env, REQUEST_TIMEOUT: String(timeout) } };
    await withServer(
      'origin',
      options,
      async (ctx) => {
        for (const c of originCases(origin)) report(await runCase(ctx, c));
      },
      { ...limits, callTimeoutMs: (timeout + 20) * 1000 },
    );
  }
  if (only.has('kill')) {
    // Indexing the big document must finish after the restart: a longer REQUEST_TIMEOUT here.
    const options = { ...base, env: { ...base.env, REQUEST_TIMEOUT: '300' } };
    for (const r of await runDurability(origin, options, short ? 10 : 60, short ? 2000 : 6000)) report(r);
  }
  if (only.has('load')) {
    await withServer('load', base, async (ctx) => {
      for (const r of await runLoad(ctx.server, origin, calls, 100, limits.rssCeilingMb)) report(r);
    });
  }
  if (only.has('stream')) {
    await withServer('stream', { ...base, env: { ...base.env, ...STREAM_GROUP_ENV } }, async (ctx) => {
      for (const r of await runStreamCases(ctx.server, origin, ctx.limits)) report(r);
    });
  }
  if (only.has('order')) {
    // Each case starts its own servers (a restart on one DATA_DIR, ALLOWED_DIRS of its own folder).
    for (const r of await runOrderCases(base, short ? 2 : 4)) report(r);
  }
  if (only.has('converge')) {
    // Each case starts its own servers on a DATA_DIR of its own (kill -9 and restarts, a broken kb.sqlite).
    for (const r of await runConvergeCases(base, origin)) report(r);
  }
  if (only.has('paths')) {
    // Each case starts its own server with ALLOWED_DIRS of its own folder: the swap race reads 10,000 times (2,000 with --short).
    for (const r of await runPathCases(base, short ? 2000 : 10_000, limits.healthBudgetMs)) report(r);
  }
} finally {
  await origin.close();
}

const failed = rows.filter((r) => !r.pass).length;
process.stdout.write(
  `\nReliability (${short ? 'short' : 'full'} pass, seed ${seed}, ${count} mutants, ${calls} load calls; /health budget ${limits.healthBudgetMs} ms, ` +
    `RSS ceiling ${limits.rssCeilingMb} MB, ${values.source ? 'src via tsx' : 'dist build'}; ${Math.round((Date.now() - t0) / 1000)} s; ` +
    `idle /health max ${idleHealth.length ? `${Math.max(...idleHealth)} ms` : '-'}, load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs)\n\n${renderTable(rows)}\n\n` +
    `${failed ? `${failed} of ${rows.length} rows FAILED` : `all ${rows.length} rows passed`}\n`,
);
process.exitCode = failed ? 1 : 0;
