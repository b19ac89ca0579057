/**
 * Shared pieces of the scoped-key tests: a key file with one key per scope, an app that uses it
 * (with two collections, team-a-docs and team-b-docs, ingested from a loopback server), and MCP
 * clients over /mcp and over stdio (the stdio server spawned from the sources with RAG_API_KEY).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { hashKey } from '../../src/auth/key-hash.ts';
import { tempDir, type Teardown } from '../helper.ts';
import { kbWorld, type KbWorld } from '../kb/surface-fixtures.ts';
import { SERVER_ENTRY_ARGS } from '../setup/server-entry.ts';

/** The keys in clear, by name; the file holds only their hashes. */
export const KEYS = {
  admin: 'key-admin-0123456789',
  reader: 'key-reader-0123456789',
  editor: 'key-editor-0123456789',
  uploader: 'key-uploader-0123456789',
  expired: 'key-expired-0123456789',
  plain: 'key-plain-0123456789',
} as const;
export type KeyName = keyof typeof KEYS;

export const KEY_FILE_ENTRIES = [
  { name: 'admin', hash: hashKey(KEYS.admin), actions: ['search', 'ingest', 'delete', 'admin'], collections: ['*'] },
  { name: 'reader', hash: hashKey(KEYS.reader), actions: ['search'], collections: ['team-a-*'] },
  { name: 'editor', hash: hashKey(KEYS.editor), actions: ['search', 'ingest', 'delete'], collections: ['team-a-*'] },
  { name: 'uploader', hash: hashKey(KEYS.uploader), actions: ['ingest'], collections: ['team-a-docs'] },
  { name: 'expired', hash: hashKey(KEYS.expired), actions: ['search'], collections: ['*'], expires_at: '2001-01-01T00:00:00Z' },
];

export function writeKeyFile(t: Teardown, entries: unknown = { keys: KEY_FILE_ENTRIES }, name = 'keys.json'): string {
  const file = path.join(tempDir(t, 'rag-keys-'), name);
  fs.writeFileSync(file, typeof entries === 'string' ? entries : JSON.stringify(entries, null, 2));
  return file;
}

export const auth = (key: KeyName | null): Record<string, string> => (key ? { authorization: `Bearer ${KEYS[key]}` } : {});

const ENDED = ['succeeded', 'partial', 'failed', 'cancelled'];

export async function waitJob(app: FastifyInstance, jobId: string): Promise<Record<string, any>> {
  for (;;) {
    const res = await app.inject({ url: `/v1/jobs/${jobId}`, headers: auth('admin') });
    if (res.statusCode !== 200) throw new Error(`GET /v1/jobs/${jobId}: ${res.statusCode} ${res.body}`);
    if (ENDED.includes(res.json().status)) return res.json();
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface ScopedWorld extends KbWorld {
  keyFile: string;
  dataDir: string;
  jobs: { a: string; b: string };
  docs: { a: string; b: string };
}

/** The app with the key file and API_KEYS=plain, and one ingested collection per team. */
export async function scopedWorld(t: Teardown): Promise<ScopedWorld> {
  const keyFile = writeKeyFile(t);
  const world = await kbWorld(t, { API_KEYS_FILE: keyFile, API_KEYS: KEYS.plain });
  const ingest = async (name: string, urls: string[]) => {
    const res = await world.app.inject({ method: 'POST', url: `/v1/collections/${name}/documents`, headers: auth('admin'), payload: { urls } });
    if (res.statusCode !== 202) throw new Error(`ingest ${name}: ${res.statusCode} ${res.body}`);
    return (await waitJob(world.app, res.json().id)) as { id: string; items: Array<{ document_id: string }> };
  };
  const a = await ingest('team-a-docs', [world.urls.otters, world.urls.volcanoes]);
  const b = await ingest('team-b-docs', [world.urls.bread]);
  return {
    ...world,
    keyFile,
    dataDir: world.app.config.dataDir,
    jobs: { a: a.id, b: b.id },
    docs: { a: a.items[0]!.document_id, b: b.items[0]!.document_id },
  };
}

export async function httpMcpClient(t: Teardown, origin: string, key: KeyName | null, options?: ClientOptions): Promise<Client> {
  const client = new Client({ name: 'scopes-test', version: '1.0.0' }, options);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers: auth(key) } }));
  t.teardown(() => client.close());
  return client;
}

/** The stdio server as an MCP client starts it (the build when current, else the sources: test/setup/server-entry.ts), with only `env` set. */
export function stdioTransport(t: Teardown, env: Record<string, string>): StdioClientTransport {
  const cwd = tempDir(t);
  return new StdioClientTransport({
    command: process.execPath,
    args: [...SERVER_ENTRY_ARGS, '--transport', 'stdio'],
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), LOG_LEVEL: 'warn', ...env },
    stderr: 'pipe',
  });
}

export async function stdioMcpClient(t: Teardown, env: Record<string, string>, options?: ClientOptions): Promise<Client> {
  const client = new Client({ name: 'scopes-stdio-test', version: '1.0.0' }, options);
  await client.connect(stdioTransport(t, env));
  t.teardown(() => client.close());
  return client;
}

/** The code of a failed tool call ("ok" when it succeeded). */
export function callOutcome(result: { isError?: boolean; content?: unknown }): string {
  if (!result.isError) return 'ok';
  const text = (result.content as Array<{ text: string }>)[0]!.text;
  return (JSON.parse(text) as { code: string }).code;
}
