/**
 * Chunks for the collection-index tests: generated text (seeded, Zipf-like word frequencies, some
 * heading paths) and paragraphs of the project's own README (real, varied prose and code), plus
 * the reference a fresh Bm25Index over the live chunks gives, which the mutable index must equal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bm25Index } from '../retrieval/bm25-reference.ts';
import { lexicalDocOf } from '../../src/retrieval/search.ts';
import type { Analyzer } from '../../src/retrieval/tokenizer.ts';
import type { LexicalChunk, LexicalHit } from '../../src/kb/lexical-index.ts';
import type { NewChunk } from '../../src/kb/types.ts';
import { seededRandom } from '../fixtures-gen/seeded-random.ts';

export const rng = seededRandom;

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'quil', 'dra', 'sen', 'pol', 'ux', 'bri', 'tor', 'ne', 'sha'];
const EXTRA = ['Café', 'naïve', 'COVID-19', '0.05', '東京都', 'カタカナ', 'Straße', 'Ångström', 'IL-6', '1,000', 'the', 'and'];

export function words(count: number, seed: number): string[] {
  const r = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let w = '';
    const n = 1 + Math.floor(r() * 3);
    for (let j = 0; j < n; j++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    out.push(w);
  }
  return out.concat(EXTRA);
}

/** `n` generated chunks with ids from `firstId`, step `step`. */
export function generatedChunks(n: number, seed: number, firstId = 1, step = 1): LexicalChunk[] {
  const r = rng(seed);
  const vocab = words(400, seed + 1);
  const pick = () => vocab[Math.floor(vocab.length * Math.pow(r(), 2.2))];
  const out: LexicalChunk[] = [];
  for (let i = 0; i < n; i++) {
    const len = Math.floor(r() * 60);
    const body: string[] = [];
    for (let j = 0; j < len; j++) body.push(pick());
    const heading_path = r() < 0.4 ? [] : Array.from({ length: 1 + Math.floor(r() * 2) }, () => `${pick()} ${pick()}`);
    out.push({ id: firstId + i * step, text: body.join(r() < 0.2 ? ', ' : ' '), heading_path });
  }
  return out;
}

/**
 * Paragraphs of the project's README.md and docs/benchmarks.md, and the lines of a source file, as
 * chunks (heading path from the markdown headings): real, varied text.
 */
export function readmeChunks(firstId: number, max = 400): LexicalChunk[] {
  const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const out: LexicalChunk[] = [];
  for (const name of ['README.md', 'docs/benchmarks.md']) {
    let heading: string[] = [];
    for (const para of fs.readFileSync(path.join(root, name), 'utf8').split(/\n\s*\n/)) {
      const m = /^(#+)\s+(.*)/.exec(para.trim());
      if (m) heading = [...heading.slice(0, m[1].length - 1), m[2]];
      else if (para.trim()) out.push({ id: firstId + out.length, text: para, heading_path: heading });
    }
  }
  const source = fs.readFileSync(path.join(root, 'src/retrieval/tokenizer.ts'), 'utf8').split('\n');
  for (let i = 0; i < source.length; i += 6) out.push({ id: firstId + out.length, text: source.slice(i, i + 6).join('\n'), heading_path: ['tokenizer.ts'] });
  return out.slice(0, max);
}

/** Bm25Index built from scratch over `live` (in id order); its search answers with chunk ids. */
export function reference(live: readonly LexicalChunk[], analyzer: Analyzer): (query: string, k: number) => LexicalHit[] {
  const sorted = [...live].sort((a, b) => a.id - b.id);
  const idx = Bm25Index.build(sorted.map(lexicalDocOf), analyzer);
  return (query, k) => idx.search(query, k).map((h) => ({ id: sorted[h.index].id, score: h.score }));
}

/** Queries drawn from the chunks' own words (1-4 words each), plus a few odd ones. */
export function queriesFrom(chunks: readonly LexicalChunk[], n: number, seed: number): string[] {
  const r = rng(seed);
  const out = ['', 'the and of', 'zzzunknown', 'Café naïve', 'COVID-19 0.05', '東京'];
  for (let i = 0; i < n; i++) {
    const c = chunks[Math.floor(r() * chunks.length)];
    const ws = `${c.heading_path.join(' ')} ${c.text}`.split(/\s+/).filter(Boolean);
    const q: string[] = [];
    for (let j = 0, m = 1 + Math.floor(r() * 4); j < m && ws.length; j++) q.push(ws[Math.floor(r() * ws.length)]);
    out.push(q.join(' '));
  }
  return out;
}

/** generatedChunks as store rows (NewChunk) for a document: ord by position, whole text, no pages. */
export function newChunks(n: number, seed: number): NewChunk[] {
  return generatedChunks(n, seed).map((c, i) => ({
    ord: i,
    text: c.text,
    page_start: null,
    page_end: null,
    heading_path: c.heading_path,
    char_start: 0,
    char_end: c.text.length,
    importance: 0.5,
    content_type: 'text',
  }));
}
