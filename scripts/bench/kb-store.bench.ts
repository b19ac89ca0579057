/**
 * The knowledge base store on 100k chunks of ~1 KB: insert throughput (replaceDocument, 100
 * documents of 1,000 chunks, lexical and with 384-d vectors), iterateChunks / iterateVectors over
 * the whole collection, chunkIdsWhere with typical filters, reopen time (quick_check included)
 * and the file size. Prints numbers; asserts nothing.
 *
 *   npx tsx scripts/bench/kb-store.bench.ts [chunks=100000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { KbStore } from '../../src/kb/kb-store.ts';
import { KB_DB_FILE } from '../../src/kb/db.ts';
import type { CollectionSearchRequest, NewChunk } from '../../src/kb/types.ts';

const TOTAL = Number(process.argv[2] ?? 100_000);
const PER_DOC = 1_000;
const DIM = 384;
const WORDS = 'the of protein cell expression analysis patients results study treatment clinical gene risk data model effect response'.split(' ');

function chunksFor(doc: number): NewChunk[] {
  let s = doc * 7919 + 1;
  const word = () => WORDS[(s = (s * 1103515245 + 12345) >>> 0) % WORDS.length];
  return Array.from({ length: PER_DOC }, (_, i) => {
    let text = `doc ${doc} chunk ${i}:`;
    while (text.length < 1000) text += ` ${word()}`;
    return {
      ord: i,
      text,
      page_start: Math.floor(i / 4) + 1,
      page_end: Math.floor(i / 4) + 1,
      heading_path: ['Chapter', `Section ${i % 10}`],
      char_start: i * 1000,
      char_end: i * 1000 + text.length,
      importance: 0.5,
      content_type: i % 9 === 0 ? 'table' : 'text',
    } satisfies NewChunk;
  });
}

function vectorsFor(n: number): Float32Array[] {
  return Array.from({ length: n }, (_, i) => Float32Array.from({ length: DIM }, (_, j) => Math.sin(i + j)));
}

const ms = (t0: number) => performance.now() - t0;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function run(label: string, withVectors: boolean): void {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-bench-'));
  const dir = path.join(base, 'kb');
  try {
    const store = new KbStore(dir);
    const c = store.createCollection('bench', null);
    if (withVectors) store.setCollectionEmbedder(c.id, 'bench', DIM);
    const docs = TOTAL / PER_DOC;
    const ids = Array.from({ length: docs }, (_, d) => store.ensureDocument(c.id, { source: `https://bench/${d % 2 ? 'odd' : 'even'}/${d}`, source_kind: 'url', source_key: `https://bench/${d}`, filename: null }).id);
    let t0 = performance.now();
    const perCommit: number[] = [];
    let genMs = 0;
    for (let d = 0; d < docs; d++) {
      const t2 = performance.now();
      const inp = { chunks: chunksFor(d), vectors: withVectors ? vectorsFor(PER_DOC) : undefined };
      genMs += ms(t2);
      const t1 = performance.now();
      store.replaceDocument(c.id, ids[d]!, { source: `https://bench/${d % 2 ? 'odd' : 'even'}/${d}`, source_kind: 'url', source_key: `https://bench/${d}`, filename: null, content_sha256: String(d).padStart(64, '0'), bytes: 1_000_000, type: 'text', title: null, pages: 250, language: d % 3 ? 'en' : 'de', job_id: null }, inp.chunks, inp.vectors);
      perCommit.push(ms(t1));
    }
    const insertMs = ms(t0) - genMs;
    perCommit.sort((a, b) => a - b);
    console.log(`[${label}] insert ${fmt(TOTAL)} chunks: ${fmt(insertMs)} ms = ${fmt((TOTAL / insertMs) * 1000)} chunks/s (commit of ${PER_DOC} chunks p50 ${perCommit[perCommit.length >> 1]!.toFixed(1)} ms, max ${perCommit[perCommit.length - 1]!.toFixed(1)} ms)`);

    t0 = performance.now();
    let n = 0;
    let heap = 0;
    for (const ch of store.iterateChunks(c.id)) {
      n += ch.text.length > 0 ? 1 : 0;
      if (n % 20_000 === 0) heap = Math.max(heap, process.memoryUsage().heapUsed);
    }
    console.log(`[${label}] iterateChunks over ${fmt(n)}: ${fmt(ms(t0))} ms (heap seen up to ${fmt(heap / 1048576)} MB)`);
    if (withVectors) {
      t0 = performance.now();
      let v = 0;
      for (const x of store.iterateVectors(c.id)) v += x.vector.length === DIM ? 1 : 0;
      console.log(`[${label}] iterateVectors over ${fmt(v)}: ${fmt(ms(t0))} ms`);
    }
    const filters: Array<[string, NonNullable<CollectionSearchRequest['filters']>]> = [
      ['no filter', {}],
      ['source_prefix (half)', { source_prefix: 'https://bench/odd/' }],
      ['language de (a third)', { language: ['de'] }],
      ['content_type table', { content_type: ['table'] }],
      ['pages 10-20', { page_from: 10, page_to: 20 }],
      ['10 document ids', { document_ids: ids.slice(0, 10) }],
      ['all combined', { source_prefix: 'https://bench/odd/', language: ['en'], content_type: ['text'], page_from: 5, page_to: 200 }],
    ];
    for (const [name, f] of filters) {
      store.chunkIdsWhere(c.id, f);
      const times: number[] = [];
      let count = 0;
      for (let i = 0; i < 5; i++) {
        const t1 = performance.now();
        count = store.chunkIdsWhere(c.id, f).length;
        times.push(ms(t1));
      }
      times.sort((a, b) => a - b);
      console.log(`[${label}] chunkIdsWhere ${name}: ${fmt(count)} ids, median ${times[2]!.toFixed(1)} ms`);
    }
    t0 = performance.now();
    const stats = store.collectionStats(c.id);
    console.log(`[${label}] collectionStats: ${ms(t0).toFixed(2)} ms (${fmt(stats.chunks)} chunks)`);
    t0 = performance.now();
    const del = store.deleteDocument(c.id, ids[0]!);
    console.log(`[${label}] deleteDocument of ${del.removedChunkIds.length} chunks: ${ms(t0).toFixed(1)} ms`);
    store.close();
    const size = fs.statSync(path.join(dir, KB_DB_FILE)).size;
    t0 = performance.now();
    new KbStore(dir, { integrityCheck: 'quick' }).close();
    const openMs = ms(t0);
    t0 = performance.now();
    const again = new KbStore(dir); // the file was closed cleanly: no check
    const fastMs = ms(t0);
    t0 = performance.now();
    const gone = again.deleteCollection(c.id);
    const deleteMs = ms(t0);
    again.close();
    console.log(`[${label}] file ${fmt(size / 1048576)} MB; reopen with quick_check (after a crash) ${fmt(openMs)} ms, without (after a clean close) ${fmt(fastMs)} ms`);
    console.log(`[${label}] deleteCollection of ${fmt(gone.chunks)} chunks: ${fmt(deleteMs)} ms`);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

run('lexical', false);
run(`vectors ${DIM}-d`, true);
