/**
 * A job whose events the test emits at will, put behind the real route: the app's knowledge base
 * answers getJob and subscribe for it (and counts live subscriptions), so the SSE streams run
 * end to end over a real socket while the test decides how much they carry.
 */
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { itemEvent, jobEndEvent, newJobRecord } from '../../src/kb/job-runner.ts';
import type { JobEvent, JobRecord, KnowledgeBaseApi } from '../../src/kb/types.ts';

export interface FakeJob {
  job: JobRecord;
  /** Live kb subscriptions for this job. */
  subscribers(): number;
  progress(index: number, message: string): void;
  item(index: number, message: string): void;
  end(): void;
}

export function fakeJob(app: FastifyInstance, items = 4): FakeJob {
  const job = newJobRecord('streams', Array.from({ length: items }, (_, i) => ({ source: `https://example.org/doc-${i}.txt`, source_kind: 'url' as const })));
  job.status = 'running';
  const listeners = new Set<(e: JobEvent) => void>();
  const kb: KnowledgeBaseApi = app.services.kb;
  const getJob = kb.getJob.bind(kb);
  const subscribe = kb.subscribe.bind(kb);
  kb.getJob = (id) => (id === job.id ? structuredClone(job) : getJob(id));
  kb.subscribe = (id, listener) => {
    if (id !== job.id) return subscribe(id, listener);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };
  const emit = (e: JobEvent) => {
    for (const l of [...listeners]) l(e);
  };
  return {
    job,
    subscribers: () => listeners.size,
    progress: (index, message) => emit(itemEvent(job, 'progress', job.items[index]!, message)),
    item: (index, message) => emit(itemEvent(job, 'item', job.items[index]!, message)),
    end: () => {
      job.status = 'succeeded';
      emit(jobEndEvent(job));
    },
  };
}

/**
 * A raw HTTP client that sends the request and then never reads: its socket is paused, so once the
 * kernel's buffers are full the server sees a reader that does not keep up.
 */
export function stalledReader(base: string, path: string, headers: Record<string, string> = {}): Promise<net.Socket> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      // HTTP/1.0: the body comes without chunked framing, so what arrives can be read as SSE as is.
      socket.write(`GET ${path} HTTP/1.0\r\nhost: ${hostname}:${port}\r\naccept: text/event-stream\r\n${extra}\r\n`);
      socket.pause();
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Everything a socket still delivers until the server closes it. */
export function readToEnd(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.once('close', () => resolve(text));
    socket.resume();
  });
}

/** Polls `check` until it holds (generous deadline: the test machine is shared and slow). */
export async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
