/**
 * Event-loop lag while a big text document is chunked and indexed, before (the one-go functions)
 * and after (time-sliced, as retrieve_chunks runs them), in process and over HTTP.
 *
 *   npm run bench:event-loop                      # 20, 50 and 95 MB
 *   npm run bench:event-loop -- --sizes 5,20      # other sizes (MB)
 *   npm run bench:event-loop -- --no-http         # in-process only
 *
 * In process: monitorEventLoopDelay (1 ms resolution) during chunk + BM25 build (+ persist and
 * reload for the sliced path); p50 / p99 / max lag and the total time, so the cost of slicing
 * shows. Over HTTP: the real server on loopback fetches the file from a loopback static server
 * (retrieve_chunks, cold) while /health is polled every 25 ms; /health latency p50 / p99 / max.
 */
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chunkDocument, chunkDocumentSliced } from '../../src/retrieval/chunking.ts';
import { buildLexicalIndex, buildLexicalIndexSliced } from '../../src/retrieval/search.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { IndexStore } from '../../src/retrieval/store/index-store.ts';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';

const args = process.argv.slice(2);
const sizesArg = args.includes('--sizes') ? args[args.indexOf('--sizes') + 1] : '20,50,95';
const SIZES = sizesArg.split(',').map(Number).filter((n) => n > 0);
const HTTP = !args.includes('--no-http');

const WORDS = 'the of and to in is was for on that with as by at from his her which this be are were has have had not but all they one been'.split(' ');
const RARE = 'zirconium basalt quasar flange aqueduct lichen obsidian turbine glacier meridian'.split(' ');

function makeText(mb: number): string {
  let s = 42;
  const r = (n: number) => (s = (s * 1103515245 + 12345) >>> 0) % n;
  const parts: string[] = [];
  let size = 0;
  const target = mb * 1024 * 1024;
  for (let i = 0; size < target; i++) {
    const words = Array.from({ length: 40 + r(120) }, () => (r(50) === 0 ? RARE[r(RARE.length)] : WORDS[r(WORDS.length)]) + (r(9) === 0 ? 's' : ''));
    const p = i % 200 === 0 ? `## Chapter ${i / 200}\n\n${words.join(' ')}.` : `${words.join(' ')}.`;
    parts.push(p);
    size += p.length + 2;
  }
  return parts.join('\n\n');
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/**
 * Lag as a 1 ms timer sees it: each firing records how late it came. (monitorEventLoopDelay
 * misses a stall that starts before its first sample, which is exactly the one-go case.)
 */
async function measure<T>(fn: () => Promise<T> | T): Promise<{ value: T; totalMs: number; p50: number; p99: number; max: number }> {
  const lags: number[] = [];
  let running = true;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    lags.push(Math.max(0, now - last - 1));
    last = now;
    if (running) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  await new Promise((r) => setTimeout(r, 10));
  const t0 = performance.now();
  const value = await fn();
  const totalMs = Math.round(performance.now() - t0);
  await new Promise((r) => setTimeout(r, 10));
  running = false;
  lags.sort((a, b) => a - b);
  const pct = (p: number) => r2(lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))]);
  return { value, totalMs, p50: pct(50), p99: pct(99), max: r2(lags.at(-1) ?? 0) };
}

function row(label: string, m: { totalMs: number; p50: number; p99: number; max: number }, extra = '') {
  console.log(`${label.padEnd(44)} total ${String(m.totalMs).padStart(7)} ms   lag p50 ${String(m.p50).padStart(7)}  p99 ${String(m.p99).padStart(8)}  max ${String(m.max).padStart(8)} ms ${extra}`);
}

async function inProcess(mb: number, text: string) {
  const doc = { kind: 'text', content: text, pages: [] } as unknown as ProcessedDocument;
  const before = await measure(() => {
    const chunks = chunkDocument(doc);
    buildLexicalIndex(chunks, new Analyzer());
    return chunks.length;
  });
  row(`${mb} MB in process, one go (before)`, before, `${before.value} chunks`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-event-loop-'));
  try {
    const after = await measure(async () => {
      const chunks = await chunkDocumentSliced(doc);
      await buildLexicalIndexSliced(chunks, new Analyzer());
      return chunks;
    });
    row(`${mb} MB in process, sliced (after)`, after, `${after.value.length} chunks, +${Math.round(((after.totalMs - before.totalMs) / before.totalMs) * 100)}% time`);
    const store = new IndexStore({ dir });
    const content = 'a'.repeat(64);
    const save = await measure(() => store.save('bench', { chunks: after.value, embedderId: null, dimension: null, contentSha256: content }));
    row(`${mb} MB persist (chunks + checksums)`, save);
    const load = await measure(() => new IndexStore({ dir }).load('bench', { embedderId: null, dimension: null, contentSha256: content }));
    row(`${mb} MB reload (verify checksums + parse)`, load, load.value ? '' : 'FAILED');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function overHttp(mb: number, text: string) {
  const { buildApp } = await import('../../src/app.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const body = Buffer.from(text);
  const files = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length }).end(body));
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  const fileUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}/big-${mb}.txt`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-event-loop-http-'));
  const app = await buildApp({ config: loadConfig({ DATA_DIR: dataDir, ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_RPM: '0', MAX_DOWNLOAD_BYTES: String(200 * 1024 * 1024) }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  try {
    // Extraction first (process_document, cached afterwards), so the retrieve_chunks row is the
    // work after extraction: chunking, BM25, persisting.
    for (const [label, url, payload] of [
      ['process_document (download + extract)', '/v1/documents/process', { document_url: fileUrl }],
      ['retrieve_chunks (chunk + index + persist)', '/v1/documents/retrieve', { document_url: fileUrl, query: 'zirconium flange', top_k: 5 }],
      ['retrieve_chunks again (memory)', '/v1/documents/retrieve', { document_url: fileUrl, query: 'quasar lichen', top_k: 5 }],
    ] as const) {
      const lat: number[] = [];
      let done = false;
      let rss = 0;
      const poll = (async () => {
        while (!done) {
          const t0 = performance.now();
          await fetch(`${base}/health`).then((r) => r.arrayBuffer());
          lat.push(performance.now() - t0);
          rss = Math.max(rss, process.memoryUsage.rss());
          await new Promise((r) => setTimeout(r, 25));
        }
      })();
      const t0 = performance.now();
      const res = await fetch(`${base}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
      const answer = (await res.json()) as { total_chunks_indexed?: number; content_length?: number; code?: string };
      const totalMs = Math.round(performance.now() - t0);
      done = true;
      await poll;
      lat.sort((a, b) => a - b);
      const pct = (p: number) => Math.round(lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] * 10) / 10;
      console.log(
        `${`${mb} MB HTTP ${label}`.padEnd(60)} total ${String(totalMs).padStart(7)} ms   /health p50 ${pct(50)}  p99 ${pct(99)}  max ${Math.round(lat.at(-1)! * 10) / 10} ms` +
          ` (${lat.length} probes), ${res.status} ${answer.total_chunks_indexed ?? answer.content_length ?? answer.code}, peak RSS ${Math.round(rss / 1048576)} MB`,
      );
    }
  } finally {
    await app.close();
    files.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(`event-loop bench: sizes ${SIZES.join(', ')} MB, node ${process.version}, ${os.availableParallelism()} cores\n`);
for (const mb of SIZES) {
  const text = makeText(mb);
  await inProcess(mb, text);
  if (HTTP) await overHttp(mb, text);
  console.log('');
}
