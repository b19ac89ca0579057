/**
 * The command line: `rag-document-server [--transport http|stdio] [--host H] [--port P]
 * [--role all|api|worker] [--workers N] [--reload] [--log-dir DIR]`. Loads .env when present, parses the configuration
 * once (an invalid value exits naming the variable), then serves HTTP (REST + MCP at /mcp),
 * optionally in N worker processes, or MCP over stdio. SIGTERM/SIGINT stop accepting, let
 * in-flight calls finish up to SHUTDOWN_TIMEOUT, close resources and exit 0.
 */
import cluster from 'node:cluster';
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import dotenv from 'dotenv';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { armHardExit } from './hard-exit.ts';
import { createLogger } from './logger.ts';
import { probeNativeAddons } from './native-addons.ts';
import { PACKAGE_INFO } from './package-info.ts';
import { PROJECT_ROOT } from './project-root.ts';
import { redactRedisUrl, RedisStartupError } from './redis/redis-errors.ts';
// The app, the MCP SDK and the services are imported by the transport that needs them, so a
// stdio client does not wait for Fastify and an HTTP client does not wait for the stdio transport.

export const USAGE = `Usage: rag-document-server [options]
       rag-document-server hash-key [KEY]   a new API key (or KEY) and its hash for API_KEYS_FILE

Options:
  --transport http|stdio  http: REST + MCP at /mcp (default); stdio: MCP on stdin/stdout
                          (env MCP_TRANSPORT; the flag wins)
  --host HOST             interface to bind (env HOST, default 127.0.0.1)
  --port PORT             port to bind (env PORT, default 8000; 0 picks a free one)
  --role all|api|worker   all (default): serve and ingest; api: serve, jobs go to the Redis queue;
                          worker: ingest from the queue (api and worker need REDIS_URL)
  --workers N             N worker processes sharing the port (one model copy each)
  --reload                restart on source changes (development; not with --workers > 1)
  --log-dir DIR           also write daily-rotating log files to DIR (env LOG_DIR)
  -h, --help              show this help
  -v, --version           print the version

Every other setting comes from the environment or .env; see .env.example.`;

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface CliOptions {
  /** Unset: MCP_TRANSPORT from the environment decides (default http). */
  transport?: 'http' | 'stdio';
  host?: string;
  port?: string;
  /** Unset: ROLE from the environment decides (default all). */
  role?: 'all' | 'api' | 'worker';
  workers: number;
  reload: boolean;
  logDir?: string;
  help: boolean;
  version: boolean;
}

export function parseCli(argv: string[]): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        transport: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        role: { type: 'string' },
        workers: { type: 'string', default: '1' },
        reload: { type: 'boolean', default: false },
        'log-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'v', default: false },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const transport = values.transport;
  if (transport !== undefined && transport !== 'http' && transport !== 'stdio') throw new UsageError(`--transport must be "http" or "stdio" (got ${JSON.stringify(transport)})`);
  const role = values.role;
  if (role !== undefined && role !== 'all' && role !== 'api' && role !== 'worker') throw new UsageError(`--role must be "all", "api" or "worker" (got ${JSON.stringify(role)})`);
  const workers = Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) throw new UsageError(`--workers must be an integer from 1 to 256 (got ${JSON.stringify(values.workers)})`);
  if (values.reload && workers > 1) {
    throw new UsageError('--reload cannot be combined with --workers > 1: reload restarts one process on file changes; run several workers without --reload');
  }
  if (transport === 'stdio' && workers > 1) throw new UsageError('--workers applies to --transport http only');
  return {
    transport,
    host: values.host,
    port: values.port,
    role,
    workers,
    reload: values.reload ?? false,
    logDir: values['log-dir'],
    help: values.help ?? false,
    version: values.version ?? false,
  };
}

/** Flags win over the environment; both go through the same configuration schema. */
export function configFromCli(cli: CliOptions, env: Record<string, string | undefined>): Readonly<Config> {
  const merged = { ...env };
  if (cli.host !== undefined) merged.HOST = cli.host;
  if (cli.port !== undefined) merged.PORT = cli.port;
  if (cli.transport !== undefined) merged.MCP_TRANSPORT = cli.transport;
  if (cli.logDir !== undefined) merged.LOG_DIR = cli.logDir;
  if (cli.role !== undefined) merged.ROLE = cli.role;
  return loadConfig(merged);
}

function fail(message: string, code = 2): never {
  process.stderr.write(`rag-document-server: ${message}\n`);
  process.exit(code);
}

/** Past SHUTDOWN_TIMEOUT, time for the cut calls' 503s to be written (two grace steps) and the close to end. */
const SHUTDOWN_MARGIN_MS = 3_000;

/**
 * Runs `stop` on the first SIGTERM/SIGINT; a second signal exits at once. Whatever `stop` waits
 * on, the process is gone `hardExitMs` after the signal (src/hard-exit.ts).
 */
function onShutdownSignal(log: Logger, hardExitMs: number, stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      log.info({ event: 'server.stop', signal }, 'shutting down');
      armHardExit(hardExitMs, () => log.error({ event: 'server.hard_exit', after_ms: hardExitMs }, 'shutdown did not finish in time: exiting'));
      stop(signal).then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

async function runHttp(config: Readonly<Config>): Promise<void> {
  const { logger, close: closeLog } = await createLogger(config);
  const { buildApp } = await import('./app.ts');
  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    app = await buildApp({ config, logger });
  } catch (err) {
    // REDIS_URL set but unreachable: one clear line (password hidden), no stack.
    if (!(err instanceof RedisStartupError)) throw err;
    logger.fatal({ event: 'redis.unreachable', url: redactRedisUrl(err.url) }, err.message);
    await closeLog();
    fail(err.message, 1);
  }
  // What a first call would otherwise load, once the server answers (plugins/warm-up.ts): the
  // language model (a detection before it is loaded loads it synchronously, so a call is never
  // answered without it). Its file is read asynchronously, so requests already waiting go first.
  app.afterStart('language-model', async () => (await import('./language/eld-model.ts')).warmLanguageModel());
  try {
    await app.listen({ host: config.HOST, port: config.PORT });
  } catch (err) {
    logger.fatal({ err }, `cannot listen on ${config.HOST}:${config.PORT}`);
    await closeLog();
    process.exit(1);
  }
  onShutdownSignal(logger, config.SHUTDOWN_TIMEOUT * 1000 + SHUTDOWN_MARGIN_MS, async () => {
    // app.close() stops accepting, waits for in-flight requests, then closes services (onClose).
    const closing = app.close();
    const deadline = setTimeout(() => {
      logger.warn(
        { event: 'server.shutdown_timeout', timeout_s: config.SHUTDOWN_TIMEOUT },
        'in-flight requests did not finish in time: answering them 503 SHUTTING_DOWN, then closing their connections',
      );
      // Calls are stopped with a coded 503 (plugins/shutdown.ts); once those are written, the
      // connections still open (keep-alive, or a response already under way) are closed.
      void app.cutInFlight().finally(() => app.server.closeAllConnections());
    }, config.SHUTDOWN_TIMEOUT * 1000);
    await closing;
    clearTimeout(deadline);
    logger.info({ event: 'server.stopped' }, 'stopped');
    await closeLog();
  });
}

/**
 * Over stdio there are no headers: with keys configured, the calls are made with RAG_API_KEY
 * (alias MCP_API_KEY) and its scopes; without it, or with a wrong or expired key, the server
 * refuses to start rather than serve with more rights than the keys give. No keys: full access.
 */
async function stdioPrincipal(config: Readonly<Config>) {
  const { KeyStore } = await import('./auth/key-store.ts');
  const store = new KeyStore(config);
  if (!store.enabled) return undefined;
  const result = store.authenticate(config.RAG_API_KEY || undefined);
  if (result.ok) return result.principal;
  if (result.reason === 'missing') fail('API keys are configured (API_KEYS or API_KEYS_FILE): set RAG_API_KEY to the key MCP over stdio calls with', 1);
  if (result.reason === 'expired') fail(`RAG_API_KEY is the key "${result.name}", which has expired`, 1);
  fail('RAG_API_KEY is not one of the configured API keys', 1);
}

async function runStdioServer(config: Readonly<Config>): Promise<void> {
  const { logger, close: closeLog } = await createLogger(config);
  await mkdir(config.dataDir, { recursive: true });
  const [{ createServices }, { startStdio }, { tools }] = await Promise.all([
    import('./services.ts'),
    import('./mcp/stdio.ts'),
    import('./tools/index.ts'),
  ]);
  const principal = await stdioPrincipal(config);
  const services = createServices(config, { log: logger });
  const session = await startStdio({ tools, services, log: logger, ...(principal ? { principal } : {}) });
  const finish = async () => {
    await session.close();
    await services.close();
    await closeLog();
  };
  onShutdownSignal(logger, config.SHUTDOWN_TIMEOUT * 1000 + SHUTDOWN_MARGIN_MS, finish);
  await session.closed;
  await finish();
  process.exit(0);
}

/** The primary of --workers N: forks, restarts crashed workers (within reason), stops them on a signal. */
async function runPrimary(workers: number, config: Readonly<Config>): Promise<void> {
  const { logger } = await createLogger(config);
  let stopping = false;
  const restarts: number[] = [];
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    const now = Date.now();
    restarts.push(now);
    while (restarts.length && restarts[0] < now - 60_000) restarts.shift();
    // `pid` is the primary's own (pino's base field); the worker's goes in worker_pid.
    logger.error({ worker_pid: worker.process.pid, code, signal }, 'worker exited');
    if (restarts.length > workers * 3) {
      logger.fatal('workers keep crashing: giving up');
      process.exit(1);
    }
    setTimeout(() => cluster.fork(), 1000).unref();
  });
  for (let i = 0; i < workers; i++) cluster.fork();
  logger.info({ event: 'server.start', workers, host: config.HOST, port: config.PORT }, `starting ${workers} workers`);
  // The workers are SIGKILLed at SHUTDOWN_TIMEOUT + 5 s (below); the primary follows them.
  onShutdownSignal(logger, (config.SHUTDOWN_TIMEOUT + 5) * 1000 + SHUTDOWN_MARGIN_MS, async () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    // Workers finish their in-flight calls; past the deadline they are killed.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
        resolve();
      }, (config.SHUTDOWN_TIMEOUT + 5) * 1000);
      cluster.on('exit', () => {
        if (Object.keys(cluster.workers ?? {}).length === 0) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  });
}

/** --reload: run this CLI under `tsx watch`, which restarts it whenever an imported file changes. */
function runWithReload(argv: string[]): void {
  const tsxCli = fileURLToPath(import.meta.resolve('tsx/cli'));
  const args = argv.filter((a) => a !== '--reload');
  const child = spawn(process.execPath, [tsxCli, 'watch', '--clear-screen=false', path.join(PROJECT_ROOT, 'src', 'server.ts'), ...args], {
    stdio: 'inherit',
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
}

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'hash-key') {
    const { hashKeyCommand } = await import('./auth/hash-key-cli.ts');
    process.exitCode = hashKeyCommand(argv.slice(1), (s) => process.stdout.write(s));
    return;
  }
  let cli: CliOptions;
  try {
    cli = parseCli(argv);
  } catch (err) {
    fail(`${(err as Error).message}\n\n${USAGE}`);
  }
  if (cli.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (cli.version) {
    process.stdout.write(`${PACKAGE_INFO.version}\n`);
    return;
  }
  // .env fills in what the environment does not set; quiet keeps stdout clean for stdio.
  dotenv.config({ quiet: true });
  let config: Readonly<Config>;
  try {
    config = configFromCli(cli, process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
  if (cli.reload) return runWithReload(argv);
  // Before any transport: one plain line per addon built for another Node.js (an Inspector run
  // with `npx -p node@22`), with the fix. The server still starts: the per-document tools work
  // and the knowledge base answers NATIVE_ADDON_MISMATCH with the same text.
  if (cluster.isPrimary) {
    for (const problem of probeNativeAddons()) process.stderr.write(`rag-document-server: ${problem.code}: ${problem.message}\n`);
  }
  if (config.MCP_TRANSPORT === 'stdio') {
    if (cli.workers > 1) fail(`--workers applies to the http transport only (MCP_TRANSPORT is stdio)\n\n${USAGE}`);
    return runStdioServer(config);
  }
  if (cli.workers > 1 && cluster.isPrimary) return runPrimary(cli.workers, config);
  return runHttp(config);
}

// Run directly (`node dist/src/server.js`, `tsx src/server.ts`). Not a top-level await: the start
// bundle (dist/server.cjs, scripts/build.mjs) is CommonJS, which has none. A failure exits 1, as
// the rejected evaluation of a main module would.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
