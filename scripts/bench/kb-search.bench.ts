/**
 * Collection search, in process, through searchCollection with the real KbStore (SQLite) and
 * CollectionLexicalIndex, on SciFact:
 *  1. latency p50/p95 of lexical search at ~10k chunks (each abstract in two chunks), plain, with
 *     a source-prefix filter, and with context 'section';
 *  2. what the confidence levels mean: one chunk per abstract (title as heading path), the 809
 *     train queries, and per level the share of queries with a relevant abstract in the top 10
 *     (for 'none', which returns no results, the top 10 the ranking would have given).
 *
 *   npx tsx scripts/bench/kb-search.bench.ts        (EVAL_DIR defaults to ../shared/eval)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KbStore } from '../../src/kb/kb-store.ts';
import { CollectionLexicalIndex } from '../../src/kb/lexical-index.ts';
import { searchCollection, type CollectionSearchDeps } from '../../src/kb/collection-search.ts';
import type { Confidence, NewChunk } from '../../src/kb/types.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';

const EVAL = path.resolve(process.env.EVAL_DIR ?? '../shared/eval', 'scifact');
const readJsonl = (f: string) => fs.readFileSync(path.join(EVAL, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const corpus: Array<{ _id: string; title: string; text: string }> = readJsonl('corpus.jsonl');
const queries: Array<{ _id: string; text: string }> = readJsonl('queries.train.jsonl');
const qrels = new Map<string, Set<string>>();
for (const line of fs.readFileSync(path.join(EVAL, 'qrels.train.tsv'), 'utf8').split('\n').slice(1)) {
  const [q, d] = line.split('\t');
  if (!q || !d) continue;
  if (!qrels.has(q)) qrels.set(q, new Set());
  qrels.get(q)!.add(d);
}

function sentences(text: string): string[] {
  return text.split(/(?<=[.!?])\s+(?=[A-Z0-9])/).filter(Boolean);
}

async function build(name: string, split: boolean) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-bench-'));
  const store = new KbStore(path.join(dir, 'kb'));
  const c = store.createCollection(name, null);
  const lexical = new CollectionLexicalIndex(new Analyzer());
  const docOf = new Map<string, string>();
  const t0 = performance.now();
  for (const a of corpus) {
    const source = `https://scifact.example/${a._id.length % 2 ? 'odd' : 'even'}/${a._id}`;
    const doc = store.ensureDocument(c.id, { source, source_kind: 'url', source_key: source, filename: null });
    docOf.set(doc.id, a._id);
    const parts: string[] = [];
    if (split) {
      const s = sentences(a.text);
      const half = Math.ceil(s.length / 2);
      parts.push(s.slice(0, half).join(' '), s.slice(half).join(' '));
    } else parts.push(a.text);
    let at = 0;
    const chunks: NewChunk[] = parts.filter((p) => p.trim()).map((text, ord) => {
      const ch: NewChunk = { ord, text, page_start: null, page_end: null, heading_path: [a.title], char_start: at, char_end: at + text.length, importance: 0.5, content_type: 'text' };
      at += text.length + 1;
      return ch;
    });
    const commit = store.replaceDocument(c.id, doc.id, {
      source, source_kind: 'url', source_key: source, filename: null, content_sha256: a._id.padStart(64, '0'), bytes: a.text.length, type: 'text', title: a.title, pages: null, language: 'en', job_id: null,
    }, chunks);
    lexical.add(commit.added.map((x) => ({ id: x.id, text: x.text, heading_path: x.heading_path })));
  }
  const buildMs = performance.now() - t0;
  const deps: CollectionSearchDeps = { collection: store.getCollection(name)!, store, indexes: { lexical, dense: null }, models: null };
  return { store, deps, docOf, buildMs, close: () => { store.close(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

const q = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]!; };
const sig = new AbortController().signal;

async function latency() {
  const b = await build('scifact-split', true);
  console.log(`\n## Latency at ${b.deps.indexes.lexical.size} chunks (${corpus.length} documents; store + index built in ${(b.buildMs / 1000).toFixed(1)} s)`);
  for (const [label, extra] of [
    ['lexical, top 10', {}],
    ['lexical, top 10, source_prefix filter (half the collection)', { filters: { source_prefix: 'https://scifact.example/odd/' } }],
    ['lexical, top 10, context section (2,000 chars)', { context: 'section' as const }],
  ] as const) {
    for (const x of queries.slice(0, 50)) await searchCollection(b.deps, { query: x.text, top_k: 10, ...extra }, sig); // warm-up
    const times: number[] = [];
    const stage: Record<string, number[]> = {};
    for (const x of queries) {
      const t0 = performance.now();
      const r = await searchCollection(b.deps, { query: x.text, top_k: 10, ...extra }, sig);
      times.push(performance.now() - t0);
      for (const [k, v] of Object.entries(r.timings_ms)) (stage[k] ??= []).push(v);
    }
    const stages = Object.entries(stage).filter(([k]) => k !== 'total_ms').map(([k, v]) => `${k} ${q(v, 0.5).toFixed(2)}`).join(', ');
    console.log(`- ${label}: p50 ${q(times, 0.5).toFixed(2)} ms, p95 ${q(times, 0.95).toFixed(2)} ms over ${queries.length} queries (stage p50: ${stages})`);
  }
  b.close();
}

async function confidenceTable() {
  const b = await build('scifact', false);
  const levels: Confidence[] = ['high', 'medium', 'low', 'none'];
  const rows = new Map<Confidence, { n: number; hit: number }>(levels.map((l) => [l, { n: 0, hit: 0 }]));
  let judged = 0;
  for (const x of queries) {
    const rel = qrels.get(x._id);
    if (!rel) continue;
    judged++;
    const r = await searchCollection(b.deps, { query: x.text, top_k: 10, explain: true }, sig);
    // 'none' returns no results: take the ranking's top 10 from the trace.
    const ids =
      r.results.length > 0
        ? r.results.map((h) => h.document_id)
        : ((r.trace as { candidates: Array<{ document_id: string; fused_rank: number }> } | undefined)?.candidates ?? []).filter((c) => c.fused_rank <= 10).map((c) => c.document_id);
    const found = ids.some((d) => rel.has(b.docOf.get(d)!));
    const row = rows.get(r.confidence)!;
    row.n++;
    if (found) row.hit++;
  }
  console.log(`\n## Confidence on SciFact train (${judged} judged queries, ${b.deps.indexes.lexical.size} abstracts, lexical)`);
  console.log('| confidence | queries | share of queries | relevant abstract in top 10 |');
  console.log('|---|---:|---:|---:|');
  for (const l of levels) {
    const { n, hit } = rows.get(l)!;
    console.log(`| ${l} | ${n} | ${((100 * n) / judged).toFixed(1)}% | ${n ? ((100 * hit) / n).toFixed(1) + '%' : '-'} |`);
  }
  const all = [...rows.values()].reduce((a, r) => ({ n: a.n + r.n, hit: a.hit + r.hit }), { n: 0, hit: 0 });
  console.log(`| all | ${all.n} | 100% | ${((100 * all.hit) / all.n).toFixed(1)}% |`);
  b.close();
}

const which = process.argv[2];
if (!which || which === 'latency') await latency();
if (!which || which === 'confidence') await confidenceTable();
