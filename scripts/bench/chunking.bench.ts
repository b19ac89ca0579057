/**
 * Chunking throughput of our adaptive chunker against LangChain.js RecursiveCharacterTextSplitter
 * on the same texts and the same settings (size, overlap, separators), and how far the outputs
 * agree: the share of our chunks that LangChain also produces, character for character.
 *
 *   npm run bench:chunking
 */
import fs from 'node:fs';
import path from 'node:path';
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import { chunkText, chunkingProfile } from '../../src/retrieval/chunking.ts';
import { abstracts, ensureInputs } from './inputs.ts';
import { CORPUS, QUICK, SectionBuilder, comparePair, isMain, log, mb, round, runStandalone } from './harness.ts';
import type { Section } from './report.ts';

interface TextCase {
  label: string;
  kind: string;
  text: string;
}

async function texts(): Promise<TextCase[]> {
  const inputs = await ensureInputs();
  const out: TextCase[] = [];
  // The extracted content of the generated 100-page PDF (what retrieve_chunks chunks).
  const { extractPdf } = await import('../../src/extractors/pdf/pdf.ts');
  const { OcrPool } = await import('../../src/extractors/ocr/ocr-pool.ts');
  const ocr = new OcrPool({ size: 1, cacheDir: path.join(path.dirname(inputs.pdf100), 'ocr-cache') });
  const doc = await extractPdf({ bytes: fs.readFileSync(inputs.pdf100), filename: 'report.pdf', signal: new AbortController().signal }, { ocr });
  await ocr.close();
  out.push({ label: '100-page PDF content', kind: 'pdf', text: doc.content });
  out.push({
    label: '300 SciFact abstracts with headings',
    kind: 'docx',
    text: abstracts()
      .slice(0, 300)
      .map((a) => `## ${a.title}\n\n${a.text}`)
      .join('\n\n'),
  });
  const war = path.join(CORPUS, 'txt', 'book-war-and-peace-1225p.txt');
  if (fs.existsSync(war)) {
    const full = fs.readFileSync(war, 'utf8');
    out.push({ label: QUICK ? 'War and Peace (first 500 KB)' : 'War and Peace (3.2 MB)', kind: 'text', text: QUICK ? full.slice(0, 500_000) : full });
  }
  return out;
}

function agreement(ours: string[], theirs: string[]): { ours: number; theirs: number; exact_share: number; identical: boolean } {
  const set = new Set(theirs.map((t) => t.trim()));
  const same = ours.filter((t) => set.has(t.trim())).length;
  const identical = ours.length === theirs.length && ours.every((t, i) => t.trim() === theirs[i].trim());
  return { ours: ours.length, theirs: theirs.length, exact_share: round(same / Math.max(1, ours.length), 4), identical };
}

export async function runChunking(): Promise<Section> {
  const runs = QUICK ? 3 : 7;
  const b = new SectionBuilder('chunking', '2. Chunking throughput', { warmup: 1, runs });
  const cases = await texts();
  const speed = b.table('Throughput with the product settings for each document type (size, overlap and separators from chunkingProfile)', [
    'text',
    'MB',
    'size / overlap',
    'ours ms',
    'ours MB/s',
    'ours chunks',
    'LangChain ms',
    'LangChain MB/s',
    'LangChain chunks',
    'x faster',
    'spread ours / LC',
    'same chunks (share of ours)',
  ]);
  const agree = b.table('Output agreement where the settings coincide', ['text', 'settings', 'ours chunks', 'LangChain chunks', 'identical output', 'share of our chunks LangChain also emits']);
  const raw: Record<string, unknown>[] = [];
  for (const c of cases) {
    log(`chunking ${c.label}`);
    const profile = chunkingProfile(c.kind, c.text.length);
    const splitter = new RecursiveCharacterTextSplitter({
      chunkSize: profile.size,
      chunkOverlap: profile.overlap,
      separators: [...profile.separators],
      keepSeparator: true,
    });
    const ourTexts = chunkText(c.text, c.kind).map((x) => x.text);
    const lcTexts = await splitter.splitText(c.text);
    const pair = await comparePair(() => chunkText(c.text, c.kind), () => splitter.splitText(c.text), { warmup: 1, runs });
    const size = mb(Buffer.byteLength(c.text));
    const a = agreement(ourTexts, lcTexts);
    speed.rows.push([
      c.label,
      round(size, 3),
      `${profile.size} / ${profile.overlap}`,
      pair.ours.median_ms,
      round(size / (pair.ours.median_ms / 1000), 2),
      ourTexts.length,
      pair.baseline.median_ms,
      round(size / (pair.baseline.median_ms / 1000), 2),
      lcTexts.length,
      pair.speedup,
      `${pair.ours.spread} / ${pair.baseline.spread}`,
      a.exact_share,
    ]);
    agree.rows.push([c.label, `product (${profile.size}/${profile.overlap}, ${profile.separators.length} separators)`, a.ours, a.theirs, a.identical, a.exact_share]);
    // Overlap off: the remaining difference is where each puts a separator.
    const lc0 = new RecursiveCharacterTextSplitter({ chunkSize: profile.size, chunkOverlap: 0, separators: [...profile.separators], keepSeparator: true });
    const ours0 = chunkText(c.text, c.kind, { chunkSize: profile.size, overlap: 0 }).map((x) => x.text);
    const a0 = agreement(ours0, await lc0.splitText(c.text));
    agree.rows.push([c.label, `same size and separators, overlap 0`, a0.ours, a0.theirs, a0.identical, a0.exact_share]);
    raw.push({ label: c.label, kind: c.kind, chars: c.text.length, profile, ...pair, agreement: a, agreement_no_overlap: a0 });
  }
  b.note(
    'Ours also computes page ranges, char offsets, heading paths, importance scores and content types per chunk; LangChain returns strings only. ' +
      'The two differ by design where a separator goes: ours keeps a sentence separator with the sentence it ends and a newline separator with the piece it opens, ' +
      'and every chunk is an exact slice of the content (for offsets); LangChain attaches every separator to the following piece. ' +
      'With overlap, ours steps back over whole trailing pieces that fit in the overlap, LangChain drops leading pieces until the rest fits.',
  );
  b.section.data = { cases: raw };
  return b.finish();
}

if (isMain(import.meta.url)) await runStandalone(runChunking);
