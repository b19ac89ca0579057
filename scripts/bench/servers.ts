/**
 * The servers the end-to-end and load benchmarks talk to, all on 127.0.0.1: a static file server
 * for the documents, and the app itself (buildApp from src/app.ts, listening on a free port) with
 * the private-network opt-in, rate limits raised and a chosen MODELS_DIR.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { formatFromFilename } from '../../src/documents/detect-type.ts';
import { FORMATS } from '../../src/documents/formats.ts';

/** The canonical media type of a file's format, from the server's own format table. */
const typeOf = (file: string): string => {
  const format = formatFromFilename(file);
  return format ? FORMATS[format].mime : 'application/octet-stream';
};

export interface FileServer {
  url(file: string): string;
  /** Requests served, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** Serves the given files (by base name) from memory, keep-alive, like a plain static server. */
export async function startFileServer(files: string[]): Promise<FileServer> {
  const byName = new Map(files.map((f) => [`/${path.basename(f)}`, { bytes: fs.readFileSync(f), type: typeOf(f) }]));
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0];
    const f = byName.get(p);
    hits.set(p, (hits.get(p) ?? 0) + 1);
    if (!f) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': f.type, 'content-length': f.bytes.length });
    res.end(f.bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (file) => `http://127.0.0.1:${port}/${path.basename(file)}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface AppServer {
  app: FastifyInstance;
  base: string;
  dataDir: string;
  close(): Promise<void>;
}

export interface AppOptions {
  /** Reuse a DATA_DIR (restart); default a fresh temporary one. */
  dataDir?: string;
  /** null = no models (lexical); else the MODELS_DIR to load. */
  modelsDir: string | null;
  env?: Record<string, string>;
}

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'rag-bench-data-'));
}

/** Builds and starts the app on 127.0.0.1:<free port>; waits until every model has settled. */
export async function startApp(opts: AppOptions): Promise<AppServer> {
  const dataDir = opts.dataDir ?? tempDataDir();
  const config = loadConfig(
    {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      ALLOW_PRIVATE_NETWORKS: 'true',
      RATE_LIMIT_RPM: '1000000',
      LOG_LEVEL: 'silent',
      MODEL_DOWNLOADS: 'never',
      MODELS_DIR: opts.modelsDir ?? path.join(dataDir, 'no-models'),
      ...opts.env,
    },
    {},
  );
  const app = await buildApp({ config });
  await app.listen({ host: '127.0.0.1', port: 0 });
  await app.services.models.ready();
  const port = (app.server.address() as AddressInfo).port;
  return {
    app,
    base: `http://127.0.0.1:${port}`,
    dataDir,
    close: () => app.close(),
  };
}

export async function postJson<T = unknown>(url: string, body: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as T };
}
