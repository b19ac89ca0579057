/**
 * An MCP agent loop without a language model: the MCP TypeScript SDK client over Streamable HTTP
 * (`<server>/mcp`) runs a fixed plan of tool calls, the same ones a model would make:
 *
 *   1. tools/list             check the server offers the knowledge-base tools
 *   2. ingest_documents       put a folder into a collection, printing notifications/progress
 *   3. get_job                follow the job until it has ended
 *   4. search_collection      find the passages for the question, each with its parent section
 *                             (context: "section"), its document, page range and headings
 *   5. answer                 print the passages with numbered citations (document, page)
 *
 * Run:  npx tsx examples/mcp-agent.ts http://127.0.0.1:8000 ./my-notes "What did we decide about the budget?"
 * The server reads the folder itself: start it with ALLOWED_DIRS naming the folder (or a parent).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { collectionNameFor, isMain, pause, runCli } from './client/cli.ts';
import { jobEnded, pageLabel, type IngestAnswer, type Job, type SearchHit, type SearchResult } from './client/wire-types.ts';

export interface AgentOptions {
  /** The server's origin, e.g. http://127.0.0.1:8000 (the MCP endpoint is <server>/mcp). */
  server: string;
  /** The folder to ingest; the server must be allowed to read it (ALLOWED_DIRS). */
  folder: string;
  question: string;
  /** Default: made from the folder's name. */
  collection?: string;
  /** Sent as `Authorization: Bearer` when the server has API_KEYS. */
  apiKey?: string;
  /** Only files matching these globs, relative to the folder (e.g. "**\/*.pdf"). */
  include?: string[];
  /** Passages to cite (default 3). */
  topK?: number;
  /** Seconds ingest_documents waits for the job before the agent polls get_job (default 20). */
  waitSeconds?: number;
  /** How often get_job is polled while the job runs (default 500 ms). */
  pollMs?: number;
  /** Give up following the job after this long (default 10 minutes). */
  jobTimeoutMs?: number;
  /** Where the agent's narration goes (default: stdout). */
  log?: (line: string) => void;
}

export interface Citation {
  /** The [n] printed in the answer. */
  n: number;
  document_id: string;
  chunk_id: number;
  source: string;
  title: string | null;
  page_start: number | null;
  page_end: number | null;
  /** "p. 2", "pp. 2-3", or null for formats without pages. */
  pages: string | null;
  heading_path: string[];
  score: number;
  passage: string;
  /** The heading section the passage sits in, as search_collection returned it. */
  section: string | null;
}

export interface AgentAnswer {
  question: string;
  collection: string;
  /** The job as get_job last returned it. */
  job: Job;
  /** The notifications/progress received while ingest_documents waited. */
  progress: Array<{ progress: number; total?: number; message?: string }>;
  /** Every tool call, in order. */
  calls: string[];
  confidence: SearchResult['confidence'];
  message: string;
  citations: Citation[];
  /** The printed answer. */
  text: string;
}

/** A tool answered isError: the server's stable code and message. */
export class ToolCallError extends Error {
  constructor(
    readonly tool: string,
    readonly code: string,
    message: string,
  ) {
    super(`${tool}: ${code}: ${message}`);
    this.name = 'ToolCallError';
  }
}

const NEEDED_TOOLS = ['ingest_documents', 'get_job', 'search_collection'];

export async function runAgent(opts: AgentOptions): Promise<AgentAnswer> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const folder = path.resolve(opts.folder);
  const collection = opts.collection ?? collectionNameFor(folder);
  const calls: string[] = [];
  const progress: AgentAnswer['progress'] = [];

  const headers: Record<string, string> = opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {};
  const endpoint = new URL('/mcp', opts.server);
  const client = new Client({ name: 'rag-example-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }));

  /** One tool call: the structured answer, or a ToolCallError with the server's code. */
  async function call<T>(name: string, args: Record<string, unknown>, onprogress?: (p: AgentAnswer['progress'][number]) => void): Promise<T> {
    calls.push(name);
    const result = await client.callTool(
      { name, arguments: args },
      undefined,
      // Progress resets the SDK's 60 s request timeout, so a long wait is not cut off.
      onprogress ? { onprogress, resetTimeoutOnProgress: true } : undefined,
    );
    if (result.isError) {
      const text = (result.content as Array<{ type: string; text?: string }>).find((c) => c.type === 'text')?.text ?? '';
      let body: { code?: string; error?: string } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        body = { error: text };
      }
      throw new ToolCallError(name, body.code ?? 'TOOL_ERROR', body.error ?? text);
    }
    return result.structuredContent as T;
  }

  try {
    // 1. What can this server do?
    calls.push('tools/list');
    const { tools } = await client.listTools();
    const missing = NEEDED_TOOLS.filter((n) => !tools.some((x) => x.name === n));
    if (missing.length) throw new Error(`the server at ${endpoint.href} does not offer ${missing.join(', ')}`);

    // 2. Ingest the folder; the server relays the job's progress while it waits.
    log(`Ingesting ${folder} into collection "${collection}"...`);
    const ingested = await call<IngestAnswer>(
      'ingest_documents',
      { name: collection, paths: [folder], ...(opts.include ? { include: opts.include } : {}), wait_seconds: opts.waitSeconds ?? 20 },
      (p) => {
        progress.push(p);
        log(`  ${p.progress.toFixed(1)}% ${p.message ?? ''}`.trimEnd());
      },
    );

    // 3. Follow the job with get_job until it has ended (at once when ingest already waited it out).
    const deadline = Date.now() + (opts.jobTimeoutMs ?? 10 * 60_000);
    let job = await call<Job>('get_job', { job_id: ingested.id });
    let lastLine = '';
    while (!jobEnded(job)) {
      const line = `  job ${job.status}: ${job.counts.done + job.counts.skipped + job.counts.failed} of ${job.counts.total} documents`;
      if (line !== lastLine) log((lastLine = line));
      if (Date.now() > deadline) throw new Error(`job ${job.id} is still ${job.status}; follow it with get_job`);
      await pause(opts.pollMs ?? 500);
      job = await call<Job>('get_job', { job_id: job.id });
    }
    const c = job.counts;
    log(`Job ${job.status}: ${c.done} ingested, ${c.skipped} unchanged or skipped, ${c.failed} failed.`);
    for (const item of job.items.filter((i) => i.stage === 'failed')) log(`  failed: ${item.source}: ${item.error?.code} ${item.error?.message}`);
    if (job.status === 'failed' || job.status === 'cancelled') throw new Error(`the ingestion job ${job.status}: ${job.reason ?? 'see get_job'}`);

    // 4. Search, with each hit's parent section to read.
    const found = await call<SearchResult>('search_collection', {
      name: collection,
      query: opts.question,
      top_k: opts.topK ?? 3,
      context: 'section',
    });

    // 5. Answer with citations.
    const citations = found.results.map((hit, i) => citationOf(hit, i + 1));
    const text = formatAnswer(opts.question, found, citations);
    log(text);
    return { question: opts.question, collection, job, progress, calls, confidence: found.confidence, message: found.message, citations, text };
  } finally {
    await client.close();
  }
}

function citationOf(hit: SearchHit, n: number): Citation {
  return {
    n,
    document_id: hit.document_id,
    chunk_id: hit.chunk_id,
    source: hit.source,
    title: hit.title,
    page_start: hit.page_start,
    page_end: hit.page_end,
    pages: pageLabel(hit.page_start, hit.page_end),
    heading_path: hit.heading_path,
    score: hit.score,
    passage: hit.text,
    section: hit.context?.text ?? null,
  };
}

const oneLine = (s: string, max: number) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** "Harbour Manual (harbour.pdf), p. 2": what a reader needs to find the passage again. */
export function citationLabel(c: Pick<Citation, 'title' | 'source' | 'pages'>): string {
  const file = c.source.startsWith('file:') || c.source.startsWith('/') ? path.basename(c.source) : c.source;
  const name = c.title && c.title !== file ? `${c.title} (${file})` : file;
  return c.pages ? `${name}, ${c.pages}` : name;
}

export function formatAnswer(question: string, found: SearchResult, citations: Citation[]): string {
  const lines = [`Q: ${question}`];
  if (citations.length === 0) {
    lines.push(`A: nothing relevant was found (${found.message})`);
    return lines.join('\n');
  }
  lines.push(`A (confidence ${found.confidence}):`);
  for (const c of citations) lines.push(`  ${oneLine(c.passage, 240)} [${c.n}]`);
  lines.push('', 'Sources:');
  for (const c of citations) {
    const where = c.heading_path.length ? ` > ${c.heading_path.join(' > ')}` : '';
    lines.push(`  [${c.n}] ${citationLabel(c)}${where} (document ${c.document_id}, chunk ${c.chunk_id}, score ${c.score.toFixed(3)})`);
    if (c.section && c.section.trim() !== c.passage.trim()) lines.push(`      section: ${oneLine(c.section, 400)}`);
  }
  return lines.join('\n');
}

const USAGE = 'usage: npx tsx examples/mcp-agent.ts <server-url> <folder> <question> [--collection NAME] [--api-key KEY] [--include GLOB]... [--top-k N]';

/** The command line; `log` replaces stdout (for a caller that embeds it). */
export async function main(argv: string[] = process.argv.slice(2), log?: (line: string) => void): Promise<AgentAnswer> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      collection: { type: 'string' },
      'api-key': { type: 'string' },
      include: { type: 'string', multiple: true },
      'top-k': { type: 'string' },
    },
  });
  const [server, folder, ...words] = positionals;
  if (!server || !folder || words.length === 0) throw new Error(USAGE);
  const apiKey = values['api-key'] ?? process.env.RAG_API_KEY;
  return runAgent({
    server,
    folder,
    question: words.join(' '),
    ...(values.collection ? { collection: values.collection } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(values.include ? { include: values.include } : {}),
    ...(values['top-k'] ? { topK: Number(values['top-k']) } : {}),
    ...(log ? { log } : {}),
  });
}

if (isMain(import.meta.url)) runCli(main);
