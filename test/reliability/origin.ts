/**
 * A misbehaving document origin on loopback: honest files under /doc/NAME, and routes that stall,
 * drip, reset, lie about their length, redirect without end or send compression bombs. URLs use
 * 127.0.0.1, so nothing resolves a host name.
 */
import http from 'node:http';
import type net from 'node:net';
import { sleep } from './harness.ts';

export interface OriginFile {
  bytes: Buffer;
  contentType: string;
  /** Sent as Content-Encoding (the bytes are already encoded). */
  encoding?: string;
}

const TEXT = Buffer.from('The harbour master logged every vessel that entered the port during the storm.\n'.repeat(40));

export class Origin {
  readonly files = new Map<string, OriginFile>();
  private readonly server: http.Server;
  private readonly sockets = new Set<net.Socket>();
  base = '';

  constructor() {
    this.server = http.createServer((req, res) => void this.route(req, res).catch(() => res.destroy()));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return this;
  }

  /** host:port, for ALLOWED_HOSTS. */
  get host(): string {
    return new URL(this.base).host;
  }

  url(path: string): string {
    return `${this.base}${path}`;
  }

  add(name: string, file: OriginFile): string {
    this.files.set(name, file);
    return this.url(`/doc/${name}`);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://origin');
    const p = url.pathname;
    const n = Number(url.searchParams.get('n') ?? '0');
    if (p.startsWith('/doc/')) {
      const f = this.files.get(decodeURIComponent(p.slice(5)));
      if (!f) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': f.contentType, 'content-length': f.bytes.byteLength, ...(f.encoding ? { 'content-encoding': f.encoding } : {}) });
      return void res.end(f.bytes);
    }
    switch (p) {
      case '/slow-headers':
        await sleep(n || 3000);
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end(TEXT);
      case '/stall':
        // Never answers; the socket stays open until the client gives up.
        return;
      case '/slow-body': {
        // The whole document, 64 bytes every 50 ms: slow but steady, so it must succeed.
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': TEXT.byteLength });
        for (let at = 0; at < TEXT.byteLength && !res.destroyed; at += 64) {
          res.write(TEXT.subarray(at, at + 64));
          await sleep(50);
        }
        return void res.end();
      }
      case '/drip':
        // A byte every 500 ms for ever: under any per-chunk idle timeout, so only a total deadline stops it.
        res.writeHead(200, { 'content-type': 'text/plain' });
        while (!res.destroyed) {
          res.write('a');
          await sleep(500);
        }
        return;
      case '/reset':
        return void req.socket.resetAndDestroy();
      case '/reset-mid-body':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': TEXT.byteLength * 2 });
        res.write(TEXT);
        await sleep(100);
        return void req.socket.resetAndDestroy();
      case '/short-length':
        // Promises twice what it sends, then closes cleanly.
        req.socket.end(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${TEXT.byteLength * 2}\r\nConnection: close\r\n\r\n${TEXT}`);
        return;
      case '/long-length':
        // Declares 100 bytes and sends the whole text on the same connection.
        req.socket.end(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n${TEXT}${TEXT}`);
        return;
      case '/huge-length':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10 ** 12) });
        return void res.write(TEXT);
      case '/garbage':
        req.socket.end(Buffer.from('\x00\x01NOT HTTP AT ALL\r\n\xff\xfe\r\n\r\n', 'latin1'));
        return;
      case '/redirect':
        // /redirect?n=K: K hops to the text document.
        if (n <= 0) return void res.writeHead(200, { 'content-type': 'text/plain' }).end(TEXT);
        return void res.writeHead(302, { location: `/redirect?n=${n - 1}` }).end();
      case '/redirect-loop':
        return void res.writeHead(302, { location: '/redirect-loop' }).end();
      case '/status':
        return void res.writeHead(n || 500, { 'content-type': 'text/plain' }).end('origin failure');
      default:
        return void res.writeHead(404).end();
    }
  }
}
