/**
 * `npm run check:mcp-clients`: runs what the README's MCP section tells users to run, as written,
 * and prints a pass/fail table (exit 1 when anything fails).
 *
 * 1. Each Claude Desktop / VS Code / Cursor configuration, started the way its client does
 *    (scripts/mcp-clients/readme-snippets.ts): stdio entries spawned from their command, args and
 *    env in a folder of the client's; HTTP entries against a server this script starts on
 *    127.0.0.1. Each must list the registry's MCP tools.
 * 2. Each MCP Inspector CLI command (needs the npm registry: npx fetches the pinned Inspector and,
 *    on Node.js 20, Node.js 22): HTTP against that server (http://127.0.0.1:8000 replaced by its
 *    address), stdio as written from the repository folder (the server then uses its default
 *    DATA_DIR, ./data, as `npm start` does). Lines for Node.js 22.19+ run with a Node.js 22 (fetched
 *    by npx) first on the PATH when this Node.js is older. Two more calls per stdio line show why it spawns
 *    "$(command -v node)": list_collections answers (the knowledge base opens), and with a plain
 *    `node` (the Inspector's Node.js 22) it answers NATIVE_ADDON_MISMATCH naming `npm rebuild`.
 * The web UI line is listed, not run (it opens a browser).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/project-root.ts';
import { spawnCliServer, tempDir, type Teardown } from '../test/helper.ts';
import {
  expectedMcpTools,
  listToolsOverHttp,
  listToolsOverStdio,
  README_ORIGIN,
  readmeInspectorCommands,
  readmeServerEntries,
  readReadme,
  resolveEntry,
  type InspectorCommand,
} from './mcp-clients/readme-snippets.ts';

/** npx's first fetch of the Inspector (and Node.js 22) takes a while on a slow line. */
const COMMAND_TIMEOUT_MS = 300_000;

interface Row {
  check: string;
  result: 'pass' | 'FAIL' | 'skip';
  detail: string;
}

const rows: Row[] = [];
const cleanups: Array<() => unknown> = [];
const scope: Teardown = { teardown: (fn) => void cleanups.push(fn) };
const expected = expectedMcpTools();

function sameTools(got: string[]): string | null {
  if (JSON.stringify(got) === JSON.stringify(expected)) return null;
  const missing = expected.filter((x) => !got.includes(x));
  const extra = got.filter((x) => !expected.includes(x));
  return `got ${got.length} tools (missing: ${missing.join(', ') || '-'}; unexpected: ${extra.join(', ') || '-'})`;
}

async function check(name: string, fn: () => Promise<string>): Promise<void> {
  try {
    rows.push({ check: name, result: 'pass', detail: await fn() });
  } catch (err) {
    const message = (err as Error).message;
    const offline = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED registry|network request to .* failed|ETIMEDOUT/.test(message);
    rows.push({ check: name, result: offline ? 'skip' : 'FAIL', detail: (offline ? 'npm registry unreachable: ' : '') + message.split('\n').slice(0, 6).join(' | ').slice(0, 600) });
  }
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One command line through bash, from the repository folder, its whole process group killed on timeout. */
function runShell(line: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], { cwd: PROJECT_ROOT, env: process.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      reject(new Error(`timed out after ${COMMAND_TIMEOUT_MS / 1000} s\n${stderr.slice(-1500)}`));
    }, COMMAND_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
const nodeRunsInspector = major > 22 || (major === 22 && minor >= 19);

/**
 * The folder of a Node.js 22 binary fetched by npx, put first on the PATH to run the Node.js 22.19+
 * lines as a user of that Node.js would (not `npx -c` around them: an npx inside `npx -c`
 * inherits npm_config_call and refuses its own arguments).
 */
let node22Bin: Promise<string> | null = null;
async function node22Dir(): Promise<string> {
  node22Bin ??= runShell('npx -y -p node@22 -c \'dirname "$(command -v node)"\'').then((r) => {
    const dir = r.stdout.trim().split('\n').pop() ?? '';
    if (r.code !== 0 || !dir) throw new Error(`npx -p node@22 failed: ${r.stderr.slice(-500)}`);
    return dir;
  });
  return node22Bin;
}

/** The line as a user on `c.runsOn` types it; a Node.js 22 line gets a Node.js 22 first on the PATH when this one is older. */
async function asTyped(c: InspectorCommand, line: string): Promise<string> {
  return c.runsOn === 'node22' && !nodeRunsInspector ? `PATH=${quote(await node22Dir())}:"$PATH"; ${line}` : line;
}

function parseJson(ran: Ran): { tools?: Array<{ name: string }>; isError?: boolean; content?: Array<{ text?: string }> } {
  try {
    return JSON.parse(ran.stdout) as ReturnType<typeof parseJson>;
  } catch {
    const noise = ran.stderr.split('\n').filter((l) => l && !l.startsWith('npm warn') && !l.startsWith('{"level"'));
    throw new Error(`exit ${ran.code}, stdout not JSON: ${ran.stdout.slice(0, 300)} ${noise.slice(-8).join(' | ')}`);
  }
}

async function main(): Promise<void> {
  const readme = readReadme();
  const entries = readmeServerEntries(readme);
  const server = await spawnCliServer(scope);
  const home = tempDir(scope, 'mcp-clients-home-');

  for (const e of entries) {
    const label = `${e.client} "${e.name}" (README:${e.line}, ${e.transport})`;
    await check(label, async () => {
      const entry = resolveEntry(e, { repoRoot: PROJECT_ROOT, home, dataDir: path.join(home, 'data'), origin: server.address });
      const { tools } = entry.transport === 'http' ? await listToolsOverHttp(entry) : await listToolsOverStdio(entry, tempDir(scope, 'mcp-client-cwd-'));
      const wrong = sameTools(tools);
      if (wrong) throw new Error(wrong);
      return `${tools.length} tools${entry.transport === 'stdio' ? ` (${entry.command} ${path.basename(entry.args?.[0] ?? '')}, cwd outside the repository)` : ''}`;
    });
  }

  for (const c of readmeInspectorCommands(readme)) {
    const label = `Inspector ${c.transport} ${c.mode}, ${c.runsOn === 'node20' ? 'Node.js 20 form' : 'Node.js 22.19+ form'} (README:${c.line})`;
    if (c.mode === 'ui') {
      rows.push({ check: label, result: 'skip', detail: 'the web UI opens a browser: not run' });
      continue;
    }
    const line = c.command.split(README_ORIGIN).join(server.address);
    await check(label, async () => {
      const out = parseJson(await runShell(await asTyped(c, line)));
      const wrong = sameTools((out.tools ?? []).map((x) => x.name));
      if (wrong) throw new Error(wrong);
      return `${out.tools!.length} tools`;
    });
    // The knowledge base must open on the Node.js that installed it: the lines this Node.js runs as is.
    if (c.transport !== 'stdio' || (c.runsOn === 'node22' && !nodeRunsInspector)) continue;
    const call = line.replace('--method tools/list', '--method tools/call --tool-name list_collections');
    await check(`  ... list_collections, server on "$(command -v node)" = ${process.version}`, async () => {
      const out = parseJson(await runShell(await asTyped(c, call)));
      if (out.isError) throw new Error(`isError: ${out.content?.[0]?.text ?? ''}`);
      return 'the knowledge base opens';
    });
    if (c.runsOn !== 'node20') continue;
    // The mistake the README's "$(command -v node)" avoids: the server on the Inspector's Node.js 22.
    await check('  ... list_collections, server on plain `node` (the Inspector\'s Node.js 22)', async () => {
      const out = parseJson(await runShell(await asTyped(c, call.replace('"$(command -v node)"', 'node'))));
      const text = out.content?.[0]?.text ?? '';
      if (major === 22) return out.isError ? `isError (unexpected on Node.js 22): ${text}` : 'answers (this Node.js is 22 too)';
      if (!out.isError || !/NATIVE_ADDON_MISMATCH/.test(text) || !/npm rebuild/.test(text)) throw new Error(`expected NATIVE_ADDON_MISMATCH naming npm rebuild, got: ${text.slice(0, 300)}`);
      return `NATIVE_ADDON_MISMATCH: ${(JSON.parse(text) as { error: string }).error.slice(0, 160)}...`;
    });
  }
}

function printTable(): void {
  const w = Math.max(...rows.map((r) => r.check.length), 5);
  process.stdout.write(`${'check'.padEnd(w)}  result  detail\n${'-'.repeat(w)}  ------  ------\n`);
  for (const r of rows) process.stdout.write(`${r.check.padEnd(w)}  ${r.result.padEnd(6)}  ${r.detail}\n`);
  const failed = rows.filter((r) => r.result === 'FAIL').length;
  const skipped = rows.filter((r) => r.result === 'skip').length;
  process.stdout.write(`\n${rows.length - failed - skipped} passed, ${failed} failed, ${skipped} skipped (expected tools: ${expected.length})\n`);
  if (failed) process.exitCode = 1;
}

try {
  await main();
} finally {
  printTable();
  for (const fn of cleanups.reverse()) await fn();
}
