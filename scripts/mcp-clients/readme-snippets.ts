/**
 * The README's MCP client configuration (Claude Desktop, VS Code, Cursor JSON blocks) and MCP
 * Inspector commands, read from README.md itself so what users copy is what gets checked. Used by
 * `npm run check:mcp-clients` (scripts/check-mcp-clients.ts) and, without the network, by
 * test/foundation/readme-mcp-snippets.test.ts.
 *
 * A snippet is spawned the way its client does: `command` looked up on the PATH, `args` as given,
 * `env` on top of the MCP SDK's default inherited variables (HOME, PATH, ...), in a folder that is
 * not the repository (clients choose their own: Claude Desktop starts servers in `/`).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PROJECT_ROOT } from '../../src/project-root.ts';
import { tools } from '../../src/tools/index.ts';

export const README_FILE = path.join(PROJECT_ROOT, 'README.md');

/** What the README writes where users put their own paths. */
export const REPO_PLACEHOLDER = '/path/to/rag-document-server';
export const HOME_PLACEHOLDER = '/Users/me';
/** The address the README's HTTP examples use (`npm start`'s default bind). */
export const README_ORIGIN = 'http://127.0.0.1:8000';

export type ClientName = 'Claude Desktop' | 'VS Code' | 'Cursor';
const CLIENTS: readonly ClientName[] = ['Claude Desktop', 'VS Code', 'Cursor'];

/** The 13 document, extraction and utility tools of the product; the knowledge-base tools come on top. */
export const PRODUCT_TOOLS = [
  'process_document',
  'chunk_document',
  'retrieve_chunks',
  'query_spreadsheet',
  'extract_pdf_text',
  'extract_docx_text',
  'extract_pptx_text',
  'extract_xlsx_tables',
  'extract_csv_tables',
  'extract_image_text',
  'detect_language',
  'get_system_health',
  'manage_cache',
] as const;

/** The tool names an MCP client must see, in order: the registry without its REST-only tools. */
export function expectedMcpTools(): string[] {
  return tools.filter((t) => t.mcp !== false).map((t) => t.name);
}

export interface ServerEntry {
  client: ClientName;
  /** The key of the entry in the client's JSON ("rag-documents"). */
  name: string;
  /** 1-based README line of the JSON block. */
  line: number;
  transport: 'stdio' | 'http';
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
}

interface Block {
  lang: string;
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The non-empty line before the fence (the paragraph that names the client). */
  before: string;
}

function fencedBlocks(readme: string): Block[] {
  const lines = readme.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    let j = i + 1;
    while (j < lines.length && !/^```\s*$/.test(lines[j]!)) j++;
    let k = i - 1;
    while (k >= 0 && lines[k]!.trim() === '') k--;
    out.push({ lang: open[1]!, text: lines.slice(i + 1, j).join('\n'), line: i + 1, before: k >= 0 ? lines[k]! : '' });
    i = j;
  }
  return out;
}

/** Every server entry of the README's client JSON blocks (a block is a client's when the paragraph before it starts with **Client**). */
export function readmeServerEntries(readme: string): ServerEntry[] {
  const out: ServerEntry[] = [];
  for (const b of fencedBlocks(readme)) {
    if (b.lang !== 'json') continue;
    const client = CLIENTS.find((c) => b.before.startsWith(`**${c}**`));
    if (!client) continue;
    const config = JSON.parse(b.text) as { mcpServers?: Record<string, RawEntry>; servers?: Record<string, RawEntry> };
    const servers = config.mcpServers ?? config.servers ?? {};
    for (const [name, raw] of Object.entries(servers)) {
      const transport = raw.type === 'http' || (raw.type === undefined && raw.url !== undefined && raw.command === undefined) ? 'http' : 'stdio';
      out.push({
        client,
        name,
        line: b.line,
        transport,
        ...(raw.command !== undefined ? { command: raw.command } : {}),
        ...(raw.args ? { args: raw.args } : {}),
        ...(raw.env ? { env: raw.env } : {}),
        ...(raw.url !== undefined ? { url: raw.url } : {}),
      });
    }
  }
  return out;
}

interface RawEntry {
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
}

export interface Places {
  /** Stands for /path/to/rag-document-server. */
  repoRoot: string;
  /** Stands for /Users/me; the folders ALLOWED_DIRS names under it are created. */
  home: string;
  /** Replaces the DATA_DIR a snippet sets (so a check writes to a temporary folder, not the repository's data/). */
  dataDir?: string;
  /** Replaces http://127.0.0.1:8000 (the server the check started). */
  origin?: string;
}

const swap = (s: string, p: Places) => {
  let out = s.split(REPO_PLACEHOLDER).join(p.repoRoot).split(HOME_PLACEHOLDER).join(p.home);
  if (p.origin) out = out.split(README_ORIGIN).join(p.origin);
  return out;
};

/** The entry as a user fills it in: placeholders replaced, the folders it names made. */
export function resolveEntry(e: ServerEntry, p: Places): ServerEntry {
  const env = e.env ? Object.fromEntries(Object.entries(e.env).map(([k, v]) => [k, swap(v, p)])) : undefined;
  if (env && p.dataDir && env.DATA_DIR !== undefined) env.DATA_DIR = p.dataDir;
  for (const dir of (env?.ALLOWED_DIRS ?? '').split(',').filter(Boolean)) mkdirSync(dir, { recursive: true });
  return {
    ...e,
    ...(e.command !== undefined ? { command: swap(e.command, p) } : {}),
    ...(e.args ? { args: e.args.map((a) => swap(a, p)) } : {}),
    ...(env ? { env } : {}),
    ...(e.url !== undefined ? { url: swap(e.url, p) } : {}),
  };
}

export interface ListResult {
  tools: string[];
  /** What the server wrote to stderr (stdio). */
  stderr: string;
}

/** initialize + tools/list over stdio, spawned as the client would (in `cwd`, a folder of the client's). */
export async function listToolsOverStdio(e: ServerEntry, cwd: string): Promise<ListResult> {
  if (!e.command) throw new Error(`${e.client} ${e.name}: no command`);
  const transport = new StdioClientTransport({ command: e.command, args: e.args ?? [], ...(e.env ? { env: e.env } : {}), cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: `readme-${e.client.replace(/\s/g, '-').toLowerCase()}`, version: '1.0.0' });
  try {
    await client.connect(transport);
    const { tools: listed } = await client.listTools();
    return { tools: listed.map((t) => t.name), stderr };
  } catch (err) {
    throw new Error(`${e.client} ${e.name}: ${(err as Error).message}\nserver stderr:\n${stderr.slice(-2000)}`, { cause: err });
  } finally {
    await client.close();
  }
}

/** initialize + tools/list over Streamable HTTP. */
export async function listToolsOverHttp(e: ServerEntry): Promise<ListResult> {
  if (!e.url) throw new Error(`${e.client} ${e.name}: no url`);
  const client = new Client({ name: 'readme-http', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(e.url)));
  try {
    const { tools: listed } = await client.listTools();
    return { tools: listed.map((t) => t.name), stderr: '' };
  } finally {
    await client.close();
  }
}

export interface InspectorCommand {
  /** 1-based README line. */
  line: number;
  command: string;
  transport: 'http' | 'stdio';
  /** CLI mode (answers and exits) or the web UI (stays up). */
  mode: 'cli' | 'ui';
  /** 'node20': carries its own Node.js 22 (`npx -p node@22`); 'node22': needs Node.js 22.19+ on the PATH. */
  runsOn: 'node20' | 'node22';
}

/** The Inspector command lines of the README's sh blocks (comments after `  #` dropped). */
export function readmeInspectorCommands(readme: string): InspectorCommand[] {
  const out: InspectorCommand[] = [];
  for (const b of fencedBlocks(readme)) {
    if (b.lang !== 'sh') continue;
    b.text.split('\n').forEach((raw, i) => {
      const command = raw.replace(/\s+#.*$/, '').trim();
      if (!command.startsWith('npx ') || !command.includes('@modelcontextprotocol/inspector')) return;
      out.push({
        line: b.line + 1 + i,
        command,
        transport: / -- /.test(command) ? 'stdio' : 'http',
        mode: command.includes('--cli') ? 'cli' : 'ui',
        runsOn: command.includes('-p node@22') ? 'node20' : 'node22',
      });
    });
  }
  return out;
}

export function readReadme(): string {
  return readFileSync(README_FILE, 'utf8');
}
