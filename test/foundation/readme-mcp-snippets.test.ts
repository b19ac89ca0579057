/**
 * The README's Claude Desktop, VS Code and Cursor configurations, read from README.md and started
 * the way each client does (issue 24): `command` from the PATH, `args` as written, `env` on top of
 * the SDK's inherited defaults, in a folder that is not the repository; then MCP initialize +
 * tools/list. The HTTP entries are asked the same over a server started on 127.0.0.1. The
 * Inspector commands need the npm registry and are run by `npm run check:mcp-clients`; here only
 * their form is checked.
 */
import path from 'node:path';
import t from 'tap';
import { PROJECT_ROOT } from '../../src/project-root.ts';
import {
  expectedMcpTools,
  listToolsOverHttp,
  listToolsOverStdio,
  PRODUCT_TOOLS,
  readmeInspectorCommands,
  readmeServerEntries,
  readReadme,
  resolveEntry,
} from '../../scripts/mcp-clients/readme-snippets.ts';
import { spawnCliServer, tempDir } from '../helper.ts';

const readme = readReadme();
const entries = readmeServerEntries(readme);
const expected = expectedMcpTools();

t.test('the README has a configuration for each client', async (t) => {
  const by = (c: string, tr: string) => entries.filter((e) => e.client === c && e.transport === tr).length;
  t.ok(by('Claude Desktop', 'stdio') >= 1, 'Claude Desktop over stdio');
  t.ok(by('VS Code', 'stdio') >= 1 && by('VS Code', 'http') >= 1, 'VS Code over stdio and HTTP');
  t.ok(by('Cursor', 'stdio') >= 1 && by('Cursor', 'http') >= 1, 'Cursor over stdio and HTTP');
  for (const name of PRODUCT_TOOLS) t.ok(expected.includes(name), `${name} is an MCP tool`);
});

t.test('every stdio configuration sets an absolute DATA_DIR (clients start servers in a folder of their own, Claude Desktop in /)', async (t) => {
  for (const e of entries.filter((x) => x.transport === 'stdio')) {
    const dir = e.env?.DATA_DIR;
    t.ok(dir !== undefined && path.isAbsolute(dir), `${e.client} ${e.name} (README line ${e.line}): DATA_DIR ${JSON.stringify(dir)}`);
  }
});

for (const e of entries.filter((x) => x.transport === 'stdio')) {
  t.test(`${e.client} "${e.name}" (README line ${e.line}) over stdio, spawned as the client does`, async (t) => {
    const home = tempDir(t, 'readme-home-');
    const entry = resolveEntry(e, { repoRoot: PROJECT_ROOT, home, dataDir: path.join(home, 'data') });
    t.equal(entry.command, 'node', 'the command as written: node from the PATH');
    t.ok(entry.args?.[0] && path.isAbsolute(entry.args[0]), 'the server by its absolute path');
    const { tools } = await listToolsOverStdio(entry, tempDir(t, 'readme-client-cwd-'));
    t.same(tools, expected, `${tools.length} tools, the registry's MCP tools`);
  });
}

t.test('the HTTP configurations over a server on 127.0.0.1', async (t) => {
  const server = await spawnCliServer(t);
  for (const e of entries.filter((x) => x.transport === 'http')) {
    const entry = resolveEntry(e, { repoRoot: PROJECT_ROOT, home: '/nonexistent', origin: server.address });
    t.equal(new URL(entry.url!).pathname, '/mcp', `${e.client} "${e.name}": the /mcp endpoint`);
    const { tools } = await listToolsOverHttp(entry);
    t.same(tools, expected, `${e.client} "${e.name}" (README line ${e.line}): ${tools.length} tools`);
  }
});

t.test('the Inspector commands: pinned, -y, and the server on the Node.js that installed it', async (t) => {
  const commands = readmeInspectorCommands(readme);
  const cli = commands.filter((c) => c.mode === 'cli');
  for (const transport of ['http', 'stdio'] as const) {
    for (const runsOn of ['node20', 'node22'] as const) {
      t.equal(cli.filter((c) => c.transport === transport && c.runsOn === runsOn).length, 1, `one ${transport} CLI command for ${runsOn}`);
    }
  }
  for (const c of commands) {
    t.match(c.command, /^npx -y /, `README line ${c.line}: npx -y (a non-interactive shell refuses to install otherwise)`);
    t.match(c.command, /@modelcontextprotocol\/inspector@\d+\.\d+\.\d+/, `README line ${c.line}: a pinned version`);
    if (c.transport === 'stdio') {
      t.match(c.command, / -- "\$\(command -v node\)" bin\/rag-document-server\.js --transport stdio$/, `README line ${c.line}: the server after --, on the installing Node.js`);
    }
  }
});
