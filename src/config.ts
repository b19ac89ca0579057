/**
 * The only reader of process.env. Every variable is parsed once at start-up through a TypeBox
 * schema; an invalid value throws ConfigError naming the variable. The result is frozen and injected.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import { KeyFileError, readKeyFile } from './auth/key-file.ts';
import { allowedHostProblem } from './documents/address-policy.ts';
import { isLoopbackHost } from './loopback.ts';

const Bool = (def: boolean) => Type.Boolean({ default: def });
const Int = (def: number, min: number, max: number) => Type.Integer({ default: def, minimum: min, maximum: max });

/** EXTRACT_MEMORY_MB when unset (bench:pdf-text runs our extractor with the flags a child gets from it). */
export const DEFAULT_EXTRACT_MEMORY_MB = 1024;

export const ConfigSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Int(8000, 0, 65535),
  /** http: REST + MCP at /mcp; stdio: MCP on stdin/stdout, no port. The --transport flag wins. */
  MCP_TRANSPORT: Type.Union([Type.Literal('http'), Type.Literal('stdio')], { default: 'http' }),
  /**
   * Tool calls per minute per client key (API key, else IP); global cap is 5x. 0 turns rate limiting
   * off. Unset on a loopback bind without API keys: LOOPBACK_RATE_LIMIT_RPM (see loadConfig).
   */
  RATE_LIMIT_RPM: Int(60, 0, 1_000_000),
  /** Bytes that may wait for one SSE/MCP stream reader (queued events plus its socket buffer); past it the reader is dropped. */
  STREAM_BUFFER_BYTES: Int(1024 * 1024, 4096, 1024 * 1024 * 1024),
  /** Open SSE/MCP progress streams per client (API key, else IP); more answer 429 RATE_LIMITED. */
  STREAM_MAX_PER_CLIENT: Int(32, 1, 1_000_000),
  /** Open SSE/MCP progress streams in all. */
  STREAM_MAX_TOTAL: Int(2_000, 1, 1_000_000),
  /** Seconds; caps every timeout class (document 300, extraction 120, utility 30). */
  REQUEST_TIMEOUT: Type.Number({ default: 300, exclusiveMinimum: 0, maximum: 86_400 }),
  /** Comma-separated API keys, each with full access; empty (and no API_KEYS_FILE) means auth is off. */
  API_KEYS: Type.String({ default: '' }),
  /** JSON or YAML file of scoped keys stored as hashes (src/auth/key-file.ts); read again on SIGHUP. */
  API_KEYS_FILE: Type.String({ default: '' }),
  /** MCP over stdio: the key its calls are made with when keys are configured (alias MCP_API_KEY). */
  RAG_API_KEY: Type.String({ default: '' }),
  LOG_LEVEL: Type.Union(
    [
      Type.Literal('fatal'),
      Type.Literal('error'),
      Type.Literal('warn'),
      Type.Literal('info'),
      Type.Literal('debug'),
      Type.Literal('trace'),
      Type.Literal('silent'),
    ],
    { default: 'info' },
  ),
  /** When set, logs are also written to daily-rotating files in this folder. */
  LOG_DIR: Type.String({ default: '' }),
  DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  /** Below this much free space (MB) on DATA_DIR's disk, /health reports 503 "disk: full" and indexes stay in memory. */
  MIN_FREE_DISK_MB: Int(100, 0, 1_048_576),
  /** Extra Host/Origin values accepted by the DNS-rebinding guard (comma-separated). */
  ALLOWED_ORIGINS: Type.String({ default: '' }),
  MAX_DOWNLOAD_BYTES: Int(100 * 1024 * 1024, 1, 2 ** 40),
  MAX_UPLOAD_BYTES: Int(100 * 1024 * 1024, 1, 2 ** 40),
  /** HTML elements we build a DOM for; larger pages are read as plain text (metadata.truncated). */
  HTML_MAX_ELEMENTS: Int(100_000, 1_000, 100_000_000),
  /** Columns kept per CSV row; wider rows are cut (metadata.columns_truncated). */
  CSV_MAX_COLUMNS: Int(2_000, 1, 1_000_000),
  /** Characters kept of a text/Markdown/JSON/XML document; the rest is cut (metadata.truncated). */
  TEXT_MAX_CHARS: Int(20_000_000, 1_000, 2_000_000_000),
  /** host[:port] list that bypasses the SSRF private-address rule (comma-separated). */
  ALLOWED_HOSTS: Type.String({ default: '' }),
  ALLOW_PRIVATE_NETWORKS: Bool(false),
  OCR_CONCURRENCY: Int(2, 1, 64),
  /** OCR languages used when a call names none ('+' or ',' separated tesseract codes, e.g. eng+deu). */
  OCR_LANGUAGES: Type.String({ default: 'eng', pattern: '^[A-Za-z_]{3,16}([+,][A-Za-z_]{3,16})*$' }),
  /** Folder of extra .traineddata files (e.g. /usr/share/tesseract-ocr/5/tessdata); empty: npm-packaged languages only. */
  TESSDATA_DIR: Type.String({ default: '' }),
  /** Scanned pages OCR'd per synchronous call; later pages are marked in the content (knowledge-base jobs OCR all). */
  OCR_MAX_PAGES: Int(30, 0, 100_000),
  /** Scanned pages OCR'd per document in knowledge-base ingestion jobs (no synchronous call waits on them). */
  OCR_MAX_PAGES_JOB: Int(2_000, 0, 1_000_000),
  /** Comma-separated absolute folders whose files may be ingested by path; empty: local files are off. */
  ALLOWED_DIRS: Type.String({ default: '' }),
  /** Documents of ingestion jobs processed at once, across all jobs. */
  INGEST_CONCURRENCY: Int(2, 1, 64),
  /** Documents that may wait in ingestion jobs, across all jobs; beyond, adding documents is OVERLOADED. */
  INGEST_QUEUE_MAX: Int(1_000, 1, 1_000_000),
  /** Megabytes of open collection indexes kept in memory; the least recently searched are closed beyond it (reopened from their snapshot on demand). */
  KB_INDEX_CACHE_MB: Int(1_024, 1, 16_777_216),
  /** Milliseconds a collection search waits for the collection's index to load (snapshot read or catch-up) before answering 503 INDEX_LOADING with Retry-After. */
  SEARCH_LOAD_WAIT_MS: Int(3_000, 0, 600_000),
  /** Worker threads that search large collections (search-pool.ts); -1: one per core, up to 4; 0: searches run on the main thread. */
  SEARCH_WORKERS: Int(-1, -1, 64),
  /** Chunks a collection needs before its searches go to the search worker threads (below it, posting a message costs more than it saves). */
  SEARCH_WORKER_MIN_CHUNKS: Int(50_000, 1, 1_000_000_000),
  /** With API keys: documents one key may have waiting in ingestion jobs; 0: a quarter of INGEST_QUEUE_MAX. Beyond it that key's new jobs are RATE_LIMITED. */
  INGEST_QUEUE_MAX_PER_KEY: Int(0, 0, 1_000_000),
  /** With API keys: unfinished ingestion jobs one key may have. */
  INGEST_JOBS_MAX_PER_KEY: Int(100, 1, 1_000_000),
  /** With REDIS_URL: tries per document of an ingestion job when a try fails for a reason a retry may cure (exponential backoff from 2 s). */
  INGEST_ATTEMPTS: Int(3, 1, 20),
  /** With REDIS_URL: seconds without a heartbeat after which a document's worker is taken for dead and another worker takes the document. */
  INGEST_STALLED_SECONDS: Int(30, 2, 3_600),
  /** Seconds one document of an ingestion job may take (download, extraction, embedding) before it fails. */
  INGEST_DOCUMENT_TIMEOUT: Type.Number({ default: 3_600, exclusiveMinimum: 0, maximum: 7 * 86_400 }),
  /** Sources (issue 25): run scheduled syncs (a source's sync_every) in this process; a lease keeps one sync of a source at a time across processes. */
  SOURCES_SCHEDULER: Bool(true),
  /** Seconds between the scheduler's looks for sources that are due. */
  SOURCES_SCHEDULER_TICK_SECONDS: Int(15, 1, 3_600),
  /** Whether site sources may have a schedule (sync_every); off: sites sync on demand only. */
  SOURCES_SITE_SCHEDULE: Bool(false),
  /** Folder sources with watch on are synced on file change (fs.watch, debounced). */
  SOURCES_WATCH: Bool(true),
  /** Milliseconds of quiet after a file change before the folder is synced. */
  SOURCES_WATCH_DEBOUNCE_MS: Int(2_000, 10, 600_000),
  /** Seconds between rescans of watched folders (the safety net where watching misses changes); 0: none. */
  SOURCES_RESCAN_SECONDS: Int(600, 0, 30 * 86_400),
  /** Seconds a sync's lease lasts without renewal (a process that died mid-sync holds it this long at most). */
  SOURCES_LEASE_SECONDS: Int(60, 5, 3_600),
  /** Whether MCP clients may add site sources with add_source (REST always may; folders and URL lists are allowed over MCP). */
  SOURCES_MCP_ADD_SITE: Bool(false),
  /** User agent of source syncs and the site crawler (robots.txt rules are read for it). */
  CRAWL_USER_AGENT: Type.String({ default: 'rag-document-server-crawler/1.0', minLength: 1, maxLength: 200 }),
  /** Milliseconds between two requests of a crawl to one host. */
  CRAWL_DELAY_MS: Int(500, 0, 60_000),
  /** Requests of a crawl in flight to one host at once. */
  CRAWL_CONCURRENCY: Int(1, 1, 2),
  /** Milliseconds one request of a sync or crawl may take before it counts as a transient failure. */
  CRAWL_REQUEST_TIMEOUT_MS: Int(30_000, 100, 600_000),
  /** Defaults of a site source's limits (each source may set its own). */
  CRAWL_MAX_PAGES: Int(500, 1, 100_000),
  CRAWL_MAX_DEPTH: Int(5, 0, 50),
  CRAWL_MAX_BYTES: Int(200 * 1024 * 1024, 1, 100 * 1024 ** 3),
  /** Pages of one PDF whose text is read (default as in src/extractors/pdf/pdf-page-limit.ts); later ones are noted in the content. */
  PDF_MAX_PAGES: Int(5_000, 1, 1_000_000),
  /** Extraction child processes at most; 0: from the CPU count (2 to 8). */
  EXTRACT_CONCURRENCY: Int(0, 0, 256),
  /** Memory ceiling (MB) of one extraction child: heap limit and RSS watchdog. */
  EXTRACT_MEMORY_MB: Int(DEFAULT_EXTRACT_MEMORY_MB, 64, 1_048_576),
  /** Extractions that may wait for a child or for memory; beyond, calls are refused (OVERLOADED). */
  EXTRACT_QUEUE_MAX: Int(32, 0, 100_000),
  /** Memory (MB) all running extractions may reserve together; 0: half the machine's, at most 16384. */
  MAX_MEMORY_MB: Int(0, 0, 16_777_216),
  CACHE_TTL_SECONDS: Int(1800, 1, 7 * 86_400),
  MODELS_DIR: Type.String({ default: '' }),
  MODEL_DOWNLOADS: Type.Union([Type.Literal('auto'), Type.Literal('never')], { default: 'never' }),
  EMBEDDINGS_URL: Type.String({ default: '' }),
  EMBEDDINGS_MODEL: Type.String({ default: '' }),
  EMBEDDINGS_API_KEY: Type.String({ default: '' }),
  RERANK_CONCURRENCY: Int(2, 1, 64),
  /** Reranker backlog: calls waiting beyond this count skip reranking. */
  RERANK_QUEUE_MAX: Int(32, 0, 10_000),
  /** Milliseconds a rerank job may wait for a slot before results keep the fused order. */
  RERANK_QUEUE_WAIT_MS: Int(10_000, 0, 600_000),
  /** onnxruntime intra-op threads; 0 lets the runtime choose. */
  ONNX_THREADS: Int(0, 0, 256),
  /** Seconds in-flight calls may take to finish after SIGTERM/SIGINT before they are aborted. */
  SHUTDOWN_TIMEOUT: Type.Number({ default: 10, minimum: 0, maximum: 3600 }),
  /** Trust X-Forwarded-For from a reverse proxy (client IP for rate limits). */
  TRUST_PROXY: Bool(false),
  /** all: serve the API and run ingestion; api: serve only (jobs go to the Redis queue); worker: run ingestion from the queue (its port serves /health). api and worker need REDIS_URL. Also --role. */
  ROLE: Type.Union([Type.Literal('all'), Type.Literal('api'), Type.Literal('worker')], { default: 'all' }),
  /** redis[s]://[user:password@]host:port[/db]. Empty: everything in-process, no Redis at all. Set: rate limits shared through it (src/redis/connection.ts). */
  REDIS_URL: Type.String({ default: '' }),
  /** When Redis is unreachable mid-run. open: rate limits are not enforced, serving goes on; closed: limited routes answer 503 RATE_LIMIT_UNAVAILABLE. */
  REDIS_FAILURE_MODE: Type.Union([Type.Literal('open'), Type.Literal('closed')], { default: 'open' }),
  /** Prefix of every Redis key this server writes (several deployments may share one Redis). */
  REDIS_KEY_PREFIX: Type.String({ default: 'rag:', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9:_.{}-]+$' }),
  /** With REDIS_URL: bytes of downloaded documents all processes keep in Redis together (least recently used evicted first; TTL CACHE_TTL_SECONDS). 0: no shared tier, each process caches alone (src/cache/shared-download-cache.ts). */
  REDIS_CACHE_MAX_BYTES: Int(256 * 1024 * 1024, 0, 2 ** 40),
  /** With REDIS_URL: downloaded files larger than this are not put in the shared cache (the memory tier still keeps them). */
  REDIS_CACHE_MAX_ENTRY_BYTES: Int(8 * 1024 * 1024, 1, 512 * 1024 * 1024),
});

export type RawConfig = Static<typeof ConfigSchema>;

export interface Config extends RawConfig {
  /**
   * Where RATE_LIMIT_RPM came from: set explicitly, the default (60), or the higher default of a
   * loopback bind without API keys (LOOPBACK_RATE_LIMIT_RPM).
   */
  rateLimitSource: 'explicit' | 'default' | 'loopback-default';
  apiKeys: string[];
  allowedHosts: string[];
  allowedOrigins: string[];
  dataDir: string;
  modelsDir: string;
  logDir: string | null;
  /** EXTRACT_CONCURRENCY, 0 resolved from the CPU count. */
  extractConcurrency: number;
  /** MAX_MEMORY_MB, 0 resolved from the machine's memory. */
  maxMemoryMb: number;
  /** SEARCH_WORKERS, -1 resolved from the CPU count (1 core: none). */
  searchWorkers: number;
  /** OCR_LANGUAGES as a list of codes. */
  ocrLanguages: string[];
  /** TESSDATA_DIR resolved; null when not set. */
  tessdataDir: string | null;
  /** ALLOWED_DIRS, each resolved with realpath at start-up; empty: local files are off. */
  allowedDirs: string[];
}

/**
 * RATE_LIMIT_RPM when it is not set, the server binds only to loopback and no API keys are
 * configured: then every caller is a program of the machine's own user (one developer's scripts,
 * an agent, the console), for whom 60 calls a minute is a wall rather than a safeguard. Still a
 * limit, so a runaway loop is slowed, not served without end. Any other bind keeps 60.
 */
export const LOOPBACK_RATE_LIMIT_RPM = 6_000;

/** Names from the original server accepted as aliases of the canonical variables. */
const ALIASES: Record<string, keyof RawConfig> = {
  MCP_RATE_LIMIT_RPM: 'RATE_LIMIT_RPM',
  MCP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  GPU_CONCURRENCY: 'RERANK_CONCURRENCY',
  MCP_API_KEY: 'RAG_API_KEY',
};

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

const list = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);

type PropertySchema = { type?: string; anyOf?: { const?: unknown }[] };
const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Value.Convert is lenient ("1.5" -> 1, "0x10" -> 16 for an integer): numbers are checked first,
 * so a fraction, hex or trailing text is an error rather than a different setting.
 */
function numberProblem(schema: PropertySchema, value: unknown): string | null {
  if (schema.type !== 'integer' && schema.type !== 'number') return null;
  if (typeof value === 'number') return schema.type === 'integer' && !Number.isInteger(value) ? 'must be integer' : null;
  if (typeof value !== 'string') return null;
  if (schema.type === 'integer') return INTEGER.test(value) ? null : 'must be integer';
  return DECIMAL.test(value) ? null : 'must be number';
}

/** The message for a value the schema rejects: enumerations and booleans list what is allowed. */
function describeProblem(schema: PropertySchema | undefined, fallback: string): string {
  const options = schema?.anyOf;
  if (options && options.length > 0 && options.every((o) => o.const !== undefined)) {
    return `must be one of ${options.map((o) => String(o.const)).join(', ')}`;
  }
  if (schema?.type === 'boolean') return 'must be true or false';
  return fallback;
}

export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<RawConfig> = {}): Readonly<Config> {
  const raw: Record<string, unknown> = {};
  for (const [alias, name] of Object.entries(ALIASES)) {
    if (env[alias] !== undefined && env[alias] !== '' && env[name] === undefined) raw[name] = env[alias];
  }
  for (const name of Object.keys(ConfigSchema.properties)) {
    const v = env[name];
    if (v !== undefined && v !== '') raw[name] = v.trim();
  }
  Object.assign(raw, overrides);
  const properties = ConfigSchema.properties as Record<string, PropertySchema>;
  for (const [name, v] of Object.entries(raw)) {
    const problem = properties[name] ? numberProblem(properties[name], v) : null;
    if (problem) throw new ConfigError(name, `${problem} (got ${JSON.stringify(v)})`);
  }
  // Default and Convert write into `raw`; messages show the value as it was given.
  const given = { ...raw };
  const value = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw)) as RawConfig;
  const first = [...Value.Errors(ConfigSchema, value)][0];
  if (first) {
    const variable = first.instancePath.replace(/^\//, '') || 'configuration';
    const shown = given[variable];
    const message = describeProblem(properties[variable], first.message);
    throw new ConfigError(variable, `${message}${shown === undefined ? '' : ` (got ${JSON.stringify(shown)})`}`);
  }
  if (value.MAX_MEMORY_MB > 0 && value.MAX_MEMORY_MB < value.EXTRACT_MEMORY_MB) {
    throw new ConfigError('MAX_MEMORY_MB', `must be at least EXTRACT_MEMORY_MB (${value.EXTRACT_MEMORY_MB}), or no extraction could run (got ${value.MAX_MEMORY_MB})`);
  }
  if (value.ROLE !== 'all' && value.REDIS_URL === '') {
    throw new ConfigError('ROLE', `${value.ROLE} needs REDIS_URL: separate API and worker processes share their ingestion queue through Redis (without it, run the default role all)`);
  }
  if (value.REDIS_URL !== '' && !/^rediss?:\/\/[^\s]+$/.test(value.REDIS_URL)) {
    // The value may hold a password: the message shows the scheme only.
    throw new ConfigError('REDIS_URL', `must be a redis:// or rediss:// URL (got one starting ${JSON.stringify(value.REDIS_URL.split(':')[0])})`);
  }
  if (value.API_KEYS_FILE !== '') {
    try {
      readKeyFile(value.API_KEYS_FILE);
    } catch (err) {
      if (err instanceof KeyFileError) throw new ConfigError('API_KEYS_FILE', `is wrong: ${err.message}`);
      throw err;
    }
  }
  for (const entry of list(value.ALLOWED_HOSTS)) {
    // An entry the address policy cannot read would be dropped there, and the host stay refused.
    const problem = allowedHostProblem(entry);
    if (problem) throw new ConfigError('ALLOWED_HOSTS', `entry ${JSON.stringify(entry)} ${problem} (accepted: host, host:port, IPv4[:port], [IPv6][:port], comma-separated)`);
  }
  const dataDir = path.resolve(value.DATA_DIR);
  const allowedDirs = resolveAllowedDirs(value.ALLOWED_DIRS);
  const apiKeys = list(value.API_KEYS);
  const rateLimitSource: Config['rateLimitSource'] =
    given.RATE_LIMIT_RPM !== undefined ? 'explicit' : isLoopbackHost(value.HOST) && apiKeys.length === 0 && value.API_KEYS_FILE === '' ? 'loopback-default' : 'default';
  return Object.freeze({
    ...value,
    RATE_LIMIT_RPM: rateLimitSource === 'loopback-default' ? LOOPBACK_RATE_LIMIT_RPM : value.RATE_LIMIT_RPM,
    rateLimitSource,
    extractConcurrency: value.EXTRACT_CONCURRENCY || Math.max(2, Math.min(8, os.availableParallelism())),
    // One core: a worker would only take turns with the main thread, and cost its memory.
    searchWorkers: value.SEARCH_WORKERS >= 0 ? value.SEARCH_WORKERS : os.availableParallelism() > 1 ? Math.min(4, os.availableParallelism()) : 0,
    maxMemoryMb: value.MAX_MEMORY_MB || Math.max(value.EXTRACT_MEMORY_MB, Math.min(16_384, Math.floor(os.totalmem() / 2 / 1024 / 1024))),
    apiKeys,
    // Resolved once, so SIGHUP reloads the same file whatever the working folder is by then.
    API_KEYS_FILE: value.API_KEYS_FILE ? path.resolve(value.API_KEYS_FILE) : '',
    allowedHosts: list(value.ALLOWED_HOSTS).map((h) => h.toLowerCase()),
    allowedOrigins: list(value.ALLOWED_ORIGINS),
    dataDir,
    modelsDir: value.MODELS_DIR ? path.resolve(value.MODELS_DIR) : path.join(dataDir, 'models'),
    logDir: value.LOG_DIR ? path.resolve(value.LOG_DIR) : null,
    ocrLanguages: [...new Set(value.OCR_LANGUAGES.split(/[+,]/))],
    tessdataDir: value.TESSDATA_DIR ? path.resolve(value.TESSDATA_DIR) : null,
    allowedDirs,
  });
}

/** ALLOWED_DIRS: absolute folders that exist, by their real path (a symlinked folder counts as its target). */
function resolveAllowedDirs(raw: string): string[] {
  const out: string[] = [];
  for (const dir of list(raw)) {
    if (!path.isAbsolute(dir)) throw new ConfigError('ALLOWED_DIRS', `must list absolute folders (got ${JSON.stringify(dir)})`);
    let real: string;
    try {
      real = fs.realpathSync(dir);
    } catch {
      throw new ConfigError('ALLOWED_DIRS', `names a folder that does not exist: ${JSON.stringify(dir)}`);
    }
    if (!fs.statSync(real).isDirectory()) throw new ConfigError('ALLOWED_DIRS', `names something that is not a folder: ${JSON.stringify(dir)}`);
    if (!out.includes(real)) out.push(real);
  }
  return out;
}
