/**
 * The typed REST client (examples/client/rest-client.ts) at work: every path, parameter, body and
 * answer below is checked by the compiler against the types generated from openapi/openapi.json.
 *
 *   1. GET  /v1/system/health                   status, version, features, security
 *   2. POST /v1/collections/{name}/documents    ingest a folder (optional), then
 *      GET  /v1/jobs/{job_id}                   follow the job until it has ended
 *   3. POST /v1/collections/{name}/search       search it (optional), with page citations
 *
 * Run:  npx tsx examples/rest-client-demo.ts http://127.0.0.1:8000
 *       npx tsx examples/rest-client-demo.ts http://127.0.0.1:8000 --folder ./notes --collection notes "the budget"
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { collectionNameFor, isMain, pause, runCli } from './client/cli.ts';
import { createRagClient, ok } from './client/rest-client.ts';
import { jobEnded, pageLabel, type Job, type SearchResult, type SystemHealth } from './client/wire-types.ts';

export interface DemoOptions {
  server: string;
  apiKey?: string;
  /** Ingest this folder first (the server must be allowed to read it: ALLOWED_DIRS). */
  folder?: string;
  /** Default: made from the folder's name. */
  collection?: string;
  /** Search the collection for this. */
  question?: string;
  /** How often the job is polled after the server's own wait (default 500 ms). */
  pollMs?: number;
  log?: (line: string) => void;
}

export interface DemoResult {
  health: SystemHealth;
  job?: Job;
  search?: SearchResult;
}

export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const client = createRagClient({ baseUrl: opts.server, ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) });

  // 1. Health: a typed body (status is "ok" | "degraded", features a map of {available, reason}).
  const health = ok(await client.GET('/v1/system/health'));
  const off = Object.entries(health.features).filter(([, f]) => !f.available).map(([name]) => name);
  log(`${health.name} ${health.version}: ${health.status}, up ${Math.round(health.uptime_seconds)} s, auth ${health.security.auth_enabled ? 'on' : 'off'}`);
  log(`  features off: ${off.length ? off.join(', ') : 'none'}; ${health.formats.length} formats`);
  const result: DemoResult = { health };

  const collection = opts.collection ?? (opts.folder ? collectionNameFor(opts.folder) : undefined);
  if (opts.folder && collection) {
    // 2. Ingest: the server waits up to wait_seconds, then the job is followed by id.
    let job: Job = ok(
      await client.POST('/v1/collections/{name}/documents', {
        params: { path: { name: collection } },
        body: { paths: [path.resolve(opts.folder)], wait_seconds: 30 },
      }),
    );
    while (!jobEnded(job)) {
      log(`  job ${job.id} ${job.status}: ${job.counts.done} of ${job.counts.total} done`);
      await pause(opts.pollMs ?? 500);
      job = ok(await client.GET('/v1/jobs/{job_id}', { params: { path: { job_id: job.id } } }));
    }
    log(`ingested into "${collection}": ${job.status} (${job.counts.done} new, ${job.counts.skipped} unchanged, ${job.counts.failed} failed)`);
    result.job = job;
  }

  if (opts.question) {
    if (!collection) throw new Error('a question needs --collection or --folder');
    // 3. Search with filters' types, context and all, known to the compiler.
    const found = ok(
      await client.POST('/v1/collections/{name}/search', {
        params: { path: { name: collection } },
        body: { query: opts.question, top_k: 3 },
      }),
    );
    log(`"${opts.question}": ${found.message}`);
    found.results.forEach((hit, i) => {
      const pages = pageLabel(hit.page_start, hit.page_end);
      log(`  [${i + 1}] ${hit.title ?? hit.source}${pages ? `, ${pages}` : ''} (score ${hit.score.toFixed(3)}): ${hit.text.replace(/\s+/g, ' ').slice(0, 160)}`);
    });
    result.search = found;
  }
  return result;
}

const USAGE = 'usage: npx tsx examples/rest-client-demo.ts <server-url> [--api-key KEY] [--folder DIR] [--collection NAME] [question]';

export async function main(argv: string[] = process.argv.slice(2), log?: (line: string) => void): Promise<DemoResult> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'api-key': { type: 'string' }, folder: { type: 'string' }, collection: { type: 'string' } },
  });
  const [server, ...words] = positionals;
  if (!server) throw new Error(USAGE);
  const apiKey = values['api-key'] ?? process.env.RAG_API_KEY;
  return runDemo({
    server,
    ...(apiKey ? { apiKey } : {}),
    ...(values.folder ? { folder: values.folder } : {}),
    ...(values.collection ? { collection: values.collection } : {}),
    ...(words.length ? { question: words.join(' ') } : {}),
    ...(log ? { log } : {}),
  });
}

if (isMain(import.meta.url)) runCli(main);
