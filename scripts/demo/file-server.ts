/**
 * The demo's file server: the files of one folder (no subfolders, no listing) over HTTP on a
 * loopback address, with a Content-Type from the extension. It stands in for the public web
 * servers the examples fetch from, so the examples run without internet.
 */
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.csv': 'text/csv; charset=utf-8',
  '.jpg': 'image/jpeg',
  '.png': 'image/png',
  '.md': 'text/markdown; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

export interface FileServer {
  /** http://127.0.0.1:PORT */
  origin: string;
  port: number;
  close(): Promise<void>;
}

/** Serves `dir` on `host:port` (port 0: any free one). */
export async function startFileServer(dir: string, port: number, host = '127.0.0.1'): Promise<FileServer> {
  const root = path.resolve(dir);
  // Only the names present at start are served: a request can never name another path.
  const names = new Set(await readdir(root));
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').split('?')[0]!.replace(/^\/+/, ''));
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !names.has(name)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const file = path.join(root, name);
    stat(file).then(
      (st) => {
        res.writeHead(200, { 'content-type': CONTENT_TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream', 'content-length': st.size });
        if (req.method === 'HEAD') res.end();
        else createReadStream(file).pipe(res);
      },
      () => res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    origin: `http://${host}:${actual}`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
