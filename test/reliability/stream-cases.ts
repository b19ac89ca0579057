/**
 * The stream group: the job events stream and big uploads against the real server.
 *
 *   slow readers   1,000 SSE clients that never read follow a running job: the server's RSS stays
 *                  within `growthMb` of its baseline while they are connected and after they go,
 *                  and /health stays within budget
 *   streams        1,000 clients that read normally follow a job to its end: /health within budget
 *   uploads        50 MB CSV, text and HTML bodies to process_document: /health within budget
 *
 * Every job has a first document that never arrives (the origin's /stall), so it keeps running
 * (and its streams open) until the case cancels it; the other documents make its events.
 */
import http from 'node:http';
import net from 'node:net';
import type { Limits } from './cases.ts';
import { call, measure, sleep, treeRssMb, type Server } from './harness.ts';
import type { Origin } from './origin.ts';
import type { Row } from './table.ts';

const G = 'stream';
const READERS = 1000;
const JSON_HEADERS = { 'content-type': 'application/json' };

async function startJob(server: Server, origin: Origin, collection: string, docs: number): Promise<string> {
  const urls = [origin.url('/stall')];
  for (let i = 0; i < docs; i++) {
    urls.push(origin.add(`${collection}-${i}.txt`, { bytes: Buffer.from(`Document ${i} of ${collection}: the harbour cranes unload ships at dawn.\n`.repeat(40)), contentType: 'text/plain' }));
  }
  await call(`${server.base}/v1/collections`, { headers: JSON_HEADERS, body: JSON.stringify({ name: collection }), timeoutMs: 30_000 });
  const a = await call(`${server.base}/v1/collections/${collection}/documents`, { headers: JSON_HEADERS, body: JSON.stringify({ urls }), timeoutMs: 60_000 });
  if (a.status !== 202) throw new Error(`ingest answered ${a.status}: ${a.body.slice(0, 200)}`);
  return (JSON.parse(a.body) as { id: string }).id;
}

async function jobCounts(server: Server, id: string): Promise<{ status: string; done: number; skipped: number; failed: number }> {
  const a = await call(`${server.base}/v1/jobs/${id}`, { timeoutMs: 30_000 });
  const j = JSON.parse(a.body) as { status: string; counts: { done: number; skipped: number; failed: number } };
  return { status: j.status, ...j.counts };
}

/** Waits until every document but the stalled one has ended (generous deadline). */
async function untilAllButOne(server: Server, id: string, docs: number): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const c = await jobCounts(server, id);
    if (c.done + c.skipped + c.failed >= docs) return;
    if (Date.now() > deadline) throw new Error(`job ${id} did not get through its documents: ${JSON.stringify(c)}`);
    await sleep(200);
  }
}

const cancel = (server: Server, id: string) => call(`${server.base}/v1/jobs/${id}/cancel`, { method: 'POST', timeoutMs: 30_000 });

/** A client that sends the request and never reads a byte of the answer. */
function stalledReader(server: Server, path: string): Promise<net.Socket> {
  const { hostname, port } = new URL(server.base);
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: hostname, port: Number(port) }, () => {
      s.write(`GET ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\naccept: text/event-stream\r\n\r\n`);
      s.pause();
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** A client that reads the stream to its end; resolves with the last event name seen. */
function reader(server: Server, path: string): { opened: Promise<void>; done: Promise<string> } {
  let opened: () => void = () => {};
  const open = new Promise<void>((r) => (opened = r));
  const done = new Promise<string>((resolve) => {
    const req = http.get(`${server.base}${path}`, { headers: { accept: 'text/event-stream' }, agent: false }, (res) => {
      opened();
      let tail = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (tail = (tail + d).slice(-4096)));
      res.on('end', () => resolve(/event: (\w+)\n[^\n]*\n\n$/.exec(tail)?.[1] ?? `status ${res.statusCode}`));
      res.on('error', () => resolve('error'));
    });
    req.on('error', () => {
      opened();
      resolve('error');
    });
  });
  return { opened: open, done };
}

async function slowReaders(server: Server, origin: Origin, limits: Limits, growthMb: number): Promise<Row> {
  const docs = 99;
  // The baseline after one job like it ran: the extraction children and the ingestion code are
  // loaded then, so what grows afterwards is what the readers cost.
  const warm = await startJob(server, origin, 'warm-up', docs);
  await untilAllButOne(server, warm, docs);
  await cancel(server, warm);
  const id = await startJob(server, origin, 'slow-readers', docs);
  const baseline = treeRssMb(server.pid);
  const sockets: net.Socket[] = [];
  const t0 = performance.now();
  let afterMb = 0;
  const m = await measure(server, async () => {
    for (let i = 0; i < READERS; i += 50) sockets.push(...(await Promise.all(Array.from({ length: 50 }, () => stalledReader(server, `/v1/jobs/${id}/events`)))));
    await untilAllButOne(server, id, docs);
    await sleep(1000);
    for (const s of sockets) s.destroy();
    await cancel(server, id);
    // Released after they go: RSS back near the baseline (a few seconds for the sockets to close).
    await sleep(3000);
    afterMb = treeRssMb(server.pid);
  });
  const ms = performance.now() - t0;
  const grew = m.rssPeakMb - baseline;
  const after = afterMb - baseline;
  const ok = grew <= growthMb && after <= growthMb && m.healthMaxMs <= limits.healthBudgetMs && m.healthFailures === 0;
  return {
    group: G,
    input: `${READERS} SSE readers that never read, a job of ${docs + 1} documents`,
    bytes: null,
    answer: `rss +${Math.round(grew)} MB while connected, +${Math.round(after)} MB after`,
    ms,
    healthMaxMs: m.healthMaxMs,
    rssPeakMb: m.rssPeakMb,
    pass: ok,
    ...(ok ? {} : { reason: `RSS growth at most ${growthMb} MB and /health within ${limits.healthBudgetMs} ms expected (health failures ${m.healthFailures})` }),
  };
}

async function normalStreams(server: Server, origin: Origin, limits: Limits): Promise<Row> {
  const docs = 99;
  const id = await startJob(server, origin, 'normal-streams', docs);
  const t0 = performance.now();
  const m = await measure(server, async () => {
    // Clients arrive in waves of 50 (each wave answered before the next), as clients of a real server do.
    const readers: ReturnType<typeof reader>[] = [];
    for (let i = 0; i < READERS; i += 50) {
      const wave = Array.from({ length: 50 }, () => reader(server, `/v1/jobs/${id}/events`));
      readers.push(...wave);
      await Promise.all(wave.map((r) => r.opened));
    }
    await untilAllButOne(server, id, docs);
    await cancel(server, id);
    return Promise.all(readers.map((r) => r.done));
  });
  const ms = performance.now() - t0;
  const ended = m.value.filter((e) => e === 'job').length;
  const ok = ended === READERS && m.healthMaxMs <= limits.healthBudgetMs && m.healthFailures === 0;
  return {
    group: G,
    input: `${READERS} SSE readers follow a job of ${docs + 1} documents to its end`,
    bytes: null,
    answer: `${ended} of ${READERS} got the final job event`,
    ms,
    healthMaxMs: m.healthMaxMs,
    rssPeakMb: m.rssPeakMb,
    pass: ok,
    ...(ok ? {} : { reason: `every reader should get the job event and /health stay within ${limits.healthBudgetMs} ms (health failures ${m.healthFailures})` }),
  };
}

/** About `mb` megabytes of a format's text, line by line. */
export function bigDocument(kind: 'csv' | 'text' | 'html', mb: number): { bytes: Buffer; contentType: string } {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < mb * 1024 * 1024; i++) {
    const line =
      kind === 'csv'
        ? `${i},harbour crane ${i},${(i * 3.5).toFixed(1)},"ship, number ${i}"\n`
        : kind === 'html'
          ? `<p>Row ${i} of the harbour <b>cranes</b> and ships number ${i * 7}</p>\n`
          : `Line ${i} about the harbour cranes and the ships that come in the morning.\n`;
    lines.push(line);
    size += line.length;
  }
  const body = kind === 'html' ? `<html><body>\n${lines.join('')}</body></html>\n` : (kind === 'csv' ? 'id,name,value,note\n' : '') + lines.join('');
  return { bytes: Buffer.from(body), contentType: kind === 'csv' ? 'text/csv' : kind === 'html' ? 'text/html' : 'text/plain' };
}

async function bigUpload(server: Server, limits: Limits, kind: 'csv' | 'text' | 'html'): Promise<Row> {
  const doc = bigDocument(kind, 50);
  const m = await measure(server, () => call(`${server.base}/v1/documents/process`, { headers: { 'content-type': doc.contentType }, body: doc.bytes, timeoutMs: limits.callTimeoutMs }));
  const a = m.value;
  // Over HTML_MAX_CHARS the server refuses the page (413) rather than parse it: also a fine answer.
  const answered = a.status === 200 || (a.status === 413 && a.code === 'PAYLOAD_TOO_LARGE');
  const ok = answered && m.healthMaxMs <= limits.healthBudgetMs && m.healthFailures === 0;
  return {
    group: G,
    input: `50 MB ${kind} upload to process_document`,
    bytes: doc.bytes.byteLength,
    answer: `${a.status || a.failure} ${a.code ?? ''}`.trim(),
    ms: a.ms,
    healthMaxMs: m.healthMaxMs,
    rssPeakMb: m.rssPeakMb,
    pass: ok,
    ...(ok ? {} : { reason: `200 (or 413 over a format limit) and /health within ${limits.healthBudgetMs} ms expected (health failures ${m.healthFailures}): ${a.body.slice(0, 160)}` }),
  };
}

/** Environment the group's server needs: every reader comes from 127.0.0.1, so one client holds 1,000 streams. */
export const STREAM_GROUP_ENV = { STREAM_MAX_PER_CLIENT: String(READERS + 100), STREAM_MAX_TOTAL: String(2 * READERS + 100) };

/** `only`: a subset of the cases by name (slow-readers, streams, uploads); all by default. */
export async function runStreamCases(server: Server, origin: Origin, limits: Limits, growthMb = 150, only: string[] = []): Promise<Row[]> {
  const wanted = (name: string) => only.length === 0 || only.includes(name);
  const rows: Row[] = [];
  const attempt = async (name: string, fn: () => Promise<Row>) => {
    try {
      rows.push(await fn());
    } catch (err) {
      rows.push({ group: G, input: name, bytes: null, answer: 'error', ms: null, healthMaxMs: null, rssPeakMb: null, pass: false, reason: (err as Error).message.slice(0, 300) });
    }
  };
  if (wanted('slow-readers')) await attempt('slow readers', () => slowReaders(server, origin, limits, growthMb));
  if (wanted('streams')) await attempt('normal streams', () => normalStreams(server, origin, limits));
  if (wanted('uploads')) for (const kind of ['csv', 'text', 'html'] as const) await attempt(`${kind} upload`, () => bigUpload(server, limits, kind));
  return rows;
}
