/**
 * Shared pieces of the surface tests (REST, SSE, MCP over the knowledge base): an app that may
 * fetch from loopback, a loopback server with three small text documents whose words are known,
 * a Server-Sent Events reader over a real socket, and waiting for a job through GET /v1/jobs/:id.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, type Teardown } from '../helper.ts';
import { startStaticServer, type StaticServer } from '../integration/helpers.ts';

export const DOCS = {
  otters: {
    name: 'otters.txt',
    text:
      'Sea otters hold hands while sleeping so they do not drift apart.\n\n' +
      'An otter raft is a group of otters floating together in the kelp forest.\n\n' +
      'Otters use stones as tools to crack open shellfish and sea urchins.\n',
  },
  volcanoes: {
    name: 'volcanoes.txt',
    text:
      'Basaltic lava from shield volcanoes flows far before it cools.\n\n' +
      'A caldera forms when a magma chamber empties and the summit collapses.\n\n' +
      'Pyroclastic flows are fast currents of hot gas and volcanic ash.\n',
  },
  bread: {
    name: 'bread.txt',
    text:
      'Sourdough bread rises with wild yeast and lactic acid bacteria.\n\n' +
      'Kneading develops gluten strands that trap the carbon dioxide.\n\n' +
      'A hot oven with steam gives the loaf a crisp, blistered crust.\n',
  },
} as const;

export interface KbWorld {
  app: FastifyInstance;
  files: StaticServer;
  urls: Record<keyof typeof DOCS, string>;
}

/** The app (loopback fetches allowed) and the document server. */
export async function kbWorld(t: Teardown, env: Record<string, string> = {}): Promise<KbWorld> {
  const app = await buildTestApp(t, { env: { ALLOW_PRIVATE_NETWORKS: 'true', ...env } });
  const files = await startStaticServer(t);
  const urls = Object.fromEntries(
    Object.entries(DOCS).map(([k, d]) => [k, files.add(d.name, Buffer.from(d.text), 'text/plain; charset=utf-8')]),
  ) as Record<keyof typeof DOCS, string>;
  return { app, files, urls };
}

const ENDED = ['succeeded', 'partial', 'failed', 'cancelled'];

/** Polls GET /v1/jobs/:id until the job has ended (the tap timeout bounds it). */
export async function jobEnded(app: FastifyInstance, jobId: string): Promise<Record<string, any>> {
  for (;;) {
    const res = await app.inject(`/v1/jobs/${jobId}`);
    if (res.statusCode !== 200) throw new Error(`GET /v1/jobs/${jobId}: ${res.statusCode} ${res.body}`);
    const job = res.json();
    if (ENDED.includes(job.status)) return job;
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface SseEvent {
  id: string | null;
  event: string;
  data: any;
}

/** Parses an SSE stream body into events (comments become event "comment"). */
export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    let id: string | null = null;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) event = 'comment';
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    out.push({ id, event, data: data.length ? JSON.parse(data.join('\n')) : null });
  }
  return out;
}

/** Listens on 127.0.0.1:0 and returns the origin. */
export async function listenLoopback(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** GET an SSE URL over a real socket; resolves with status, headers and the whole body when the server ends it. */
export function readSse(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}
