/**
 * The demo's requests, declared once: printed as curl commands to paste (the README's offline
 * block is the same text) and, with `npm run demo -- --check`, sent and checked. They use three
 * shell variables the demo prints first: BASE (the server), D (the file server) and DEMO (the
 * folder of sample files).
 */
import { readFile } from 'node:fs/promises';
import { DEMO_FILES, SAMPLE_XLSX_UUID } from '../../src/tools/examples.ts';
import { DEMO_EXTRA_FILES } from './sample-files.ts';

export interface DemoVars {
  /** BASE: http://127.0.0.1:8000 */
  base: string;
  /** D: the file server's origin. */
  files: string;
  /** DEMO: the folder of sample files (absolute). */
  dir: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface DemoCommand {
  section: string;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path and query; `$D` and `$DEMO` inside strings stand for the variables. */
  path: string;
  json?: Json;
  /** Form fields; a value starting with `@` is a file (`@$DEMO/name`). */
  form?: Record<string, string>;
  /** A raw body: the file and its Content-Type. */
  raw?: { file: string; type: string };
  /** The status a working server answers. */
  status: number;
  /** A further check of the answer: a problem, or null when it is right. */
  check?: (body: Record<string, unknown>) => string | null;
}

const f = (name: string) => `$D/${name}`;
const local = (name: string) => `$DEMO/${name}`;

/** An ingestion job that ran to its end without failures. */
const jobSucceeded = (body: Record<string, unknown>) => {
  const counts = body.counts as { failed?: number } | undefined;
  return body.status === 'succeeded' && counts?.failed === 0 ? null : `job ${String(body.status)}, counts ${JSON.stringify(counts)}`;
};
const hasResults = (body: Record<string, unknown>) => (Array.isArray(body.results) && body.results.length > 0 ? null : 'no results');
/** The answer holds this word somewhere (OCR and extraction read the sample's text). */
const mentions = (word: string) => (body: Record<string, unknown>) => (JSON.stringify(body).toLowerCase().includes(word) ? null : `the answer does not mention "${word}"`);

export const DEMO_COMMANDS: readonly DemoCommand[] = [
  { section: 'documents', method: 'POST', path: '/v1/documents/process', json: { document_url: f(DEMO_FILES.pdf) }, status: 200, check: mentions('converse') },
  { section: 'documents', method: 'POST', path: '/v1/documents/chunk', json: { document_url: f(DEMO_FILES.docx) }, status: 200 },
  {
    section: 'documents',
    method: 'POST',
    path: '/v1/documents/retrieve',
    json: { document_url: f(DEMO_FILES.pdf), query: 'How do agents converse to solve tasks?', top_k: 3 },
    status: 200,
    check: hasResults,
  },
  {
    section: 'documents',
    method: 'POST',
    path: '/v1/spreadsheets/query',
    json: { document_url: f(DEMO_FILES.xlsx), search_value: SAMPLE_XLSX_UUID.slice(0, 8), column: 'Beta' },
    status: 200,
    check: (b) => (b.match_count === 1 ? null : `match_count ${String(b.match_count)}`),
  },
  { section: 'documents', method: 'POST', path: '/v1/documents/process', json: { document_url: f(DEMO_EXTRA_FILES.markdown) }, status: 200 },
  { section: 'documents', method: 'POST', path: '/v1/documents/process', json: { document_url: f(DEMO_EXTRA_FILES.html) }, status: 200 },

  { section: 'extraction', method: 'POST', path: '/v1/extract/pdf', json: { document_url: f(DEMO_FILES.invoicePdf) }, status: 200, check: mentions('total due') },
  { section: 'extraction', method: 'POST', path: '/v1/extract/docx', json: { document_url: f(DEMO_FILES.docx) }, status: 200 },
  { section: 'extraction', method: 'POST', path: '/v1/extract/pptx', json: { document_url: f(DEMO_FILES.pptx) }, status: 200 },
  { section: 'extraction', method: 'POST', path: '/v1/extract/xlsx', json: { document_url: f(DEMO_FILES.xlsx) }, status: 200 },
  { section: 'extraction', method: 'POST', path: '/v1/extract/csv', json: { document_url: f(DEMO_FILES.csv) }, status: 200 },
  { section: 'extraction', method: 'POST', path: '/v1/extract/image', json: { image_url: f(DEMO_FILES.image) }, status: 200, check: mentions('converse') },

  { section: 'utility', method: 'POST', path: '/v1/language/detect', json: { text: 'Ceci est un petit texte en français.' }, status: 200 },
  { section: 'utility', method: 'GET', path: '/v1/system/health', status: 200 },
  { section: 'utility', method: 'POST', path: '/v1/cache', json: { action: 'stats' }, status: 200 },

  {
    section: 'uploads',
    method: 'POST',
    path: '/v1/documents/retrieve',
    form: { file: `@${local(DEMO_FILES.pdf)}`, query: 'How do agents converse to solve tasks?', top_k: '3' },
    status: 200,
    check: hasResults,
  },
  { section: 'uploads', method: 'POST', path: '/v1/extract/image', form: { file: `@${local(DEMO_FILES.image)}` }, status: 200, check: mentions('converse') },
  { section: 'uploads', method: 'POST', path: '/v1/documents/retrieve?query=agents&top_k=3', raw: { file: local(DEMO_FILES.pdf), type: 'application/pdf' }, status: 200, check: hasResults },

  { section: 'knowledge base', method: 'POST', path: '/v1/collections', json: { name: 'demo', description: 'The npm run demo files' }, status: 201 },
  {
    section: 'knowledge base',
    method: 'POST',
    path: '/v1/collections/demo/documents',
    json: { urls: [f(DEMO_FILES.pdf), f(DEMO_FILES.invoicePdf)], wait_seconds: 60 },
    status: 202,
    check: jobSucceeded,
  },
  {
    section: 'knowledge base',
    method: 'POST',
    path: '/v1/collections/demo/documents',
    json: { paths: ['$DEMO'], include: ['**/*.md', '**/*.html'], wait_seconds: 60 },
    status: 202,
    check: jobSucceeded,
  },
  { section: 'knowledge base', method: 'POST', path: '/v1/collections/demo/documents', form: { file: `@${local(DEMO_FILES.docx)}`, wait_seconds: '60' }, status: 202, check: jobSucceeded },
  {
    section: 'knowledge base',
    method: 'POST',
    path: '/v1/collections/demo/search',
    json: { query: 'crane hydraulic hose', top_k: 5, context: 'section' },
    status: 200,
    check: hasResults,
  },
  { section: 'knowledge base', method: 'GET', path: '/v1/collections/demo/documents?limit=20', status: 200 },
  { section: 'knowledge base', method: 'GET', path: '/v1/jobs?collection=demo', status: 200 },
];

// ---------------------------------------------------------------- as curl

/** A JSON body inside single quotes, with `$D` / `$DEMO` left to the shell. */
function shellJson(value: Json): string {
  const text = JSON.stringify(value).replace(/'/g, `'\\''`);
  return `'${text.replace(/\$(DEMO|D)\b/g, `'$$$1'`)}'`;
}

/** A form value: bare when the shell leaves it alone, else single-quoted. */
const shellWord = (s: string) => (/^[\w@$/.:=+-]*$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

const url = (p: string) => (/[?&]/.test(p) ? `"$BASE${p}"` : `$BASE${p}`);

export function toCurl(c: DemoCommand): string {
  const parts = ['curl -s'];
  if (c.method === 'DELETE' || (c.method === 'POST' && !c.json && !c.form && !c.raw)) parts.push(`-X ${c.method}`);
  parts.push(url(c.path));
  if (c.json !== undefined) parts.push(`-H 'content-type: application/json' -d ${shellJson(c.json)}`);
  if (c.form) for (const [k, v] of Object.entries(c.form)) parts.push(`-F ${k}=${shellWord(v)}`);
  if (c.raw) parts.push(`-H 'content-type: ${c.raw.type}' --data-binary @${c.raw.file}`);
  return parts.join(' ');
}

/** The block to paste: the variables, then the commands under their sections. */
export function curlBlock(vars: DemoVars): string {
  const lines = [`BASE=${vars.base}`, `D=${vars.files}`, `DEMO=${vars.dir}`];
  let section = '';
  for (const c of DEMO_COMMANDS) {
    if (c.section !== section) {
      section = c.section;
      lines.push('', `# ${section}`);
    }
    lines.push(toCurl(c));
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- sent

const expand = (s: string, vars: DemoVars) => s.replace(/\$(DEMO|D)\b/g, (_m, v: string) => (v === 'D' ? vars.files : vars.dir));

function expandJson(value: Json, vars: DemoVars): Json {
  if (typeof value === 'string') return expand(value, vars);
  if (Array.isArray(value)) return value.map((v) => expandJson(v, vars));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandJson(v, vars)]));
  return value;
}

export interface CommandOutcome {
  command: DemoCommand;
  status: number;
  problem: string | null;
}

/** Sends one command as curl would and checks the answer. */
export async function runCommand(c: DemoCommand, vars: DemoVars): Promise<CommandOutcome> {
  const init: RequestInit = { method: c.method, signal: AbortSignal.timeout(300_000) };
  if (c.json !== undefined) {
    init.headers = { 'content-type': 'application/json' };
    init.body = JSON.stringify(expandJson(c.json, vars));
  } else if (c.form) {
    const form = new FormData();
    for (const [k, v] of Object.entries(c.form)) {
      if (v.startsWith('@')) {
        const file = expand(v.slice(1), vars);
        form.append(k, new Blob([new Uint8Array(await readFile(file))]), file.split('/').pop());
      } else form.append(k, v);
    }
    init.body = form;
  } else if (c.raw) {
    init.headers = { 'content-type': c.raw.type };
    init.body = new Uint8Array(await readFile(expand(c.raw.file, vars)));
  }
  const res = await fetch(`${vars.base}${c.path}`, init);
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON: the status tells */
  }
  const problem =
    res.status !== c.status ? `HTTP ${res.status}, expected ${c.status}: ${text.slice(0, 300)}` : (c.check?.(body) ?? null);
  return { command: c, status: res.status, problem };
}
