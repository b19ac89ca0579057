/**
 * Chunking and the BM25 build run in time slices for big documents: the sliced forms give exactly
 * the results of the one-go forms, and an aborted call stops within a slice with the coded error.
 */
import t from 'tap';
import { chunkDocument, chunkDocumentSliced, chunkText } from '../../src/retrieval/chunking.ts';
import { buildLexicalIndex, buildLexicalIndexSliced } from '../../src/retrieval/search.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';
import { isToolError } from '../../src/errors.ts';
import { turnsUntilSettled } from '../poll.ts';

const WORDS = 'alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega photon neutron quark lepton boson'.split(' ');

/** Markdown-ish text of about `chars` characters: headings, paragraphs, lists, numbers. */
function bigText(chars: number, seed = 1): string {
  let s = seed;
  const r = (n: number) => (s = (s * 1103515245 + 12345) >>> 0) % n;
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < chars; i++) {
    let p: string;
    if (i % 40 === 0) p = `${'#'.repeat(1 + r(3))} Section ${i} ${WORDS[r(WORDS.length)]}`;
    else if (i % 17 === 0) p = Array.from({ length: 4 }, (_, k) => `- item ${k} ${WORDS[r(WORDS.length)]} ${r(1000)}%`).join('\n');
    else p = Array.from({ length: 20 + r(80) }, () => WORDS[r(WORDS.length)]).join(' ') + '.';
    parts.push(p);
    size += p.length + 2;
  }
  return parts.join('\n\n');
}

const doc = (content: string, kind = 'text'): ProcessedDocument => ({ kind, content, pages: [] }) as unknown as ProcessedDocument;

t.test('sliced chunking and indexing equal the one-go forms', async (t) => {
  for (const [kind, chars] of [['text', 3_000_000], ['docx', 400_000], ['pdf', 2_000]] as const) {
    const d = doc(bigText(chars, chars), kind);
    const once = chunkDocument(d);
    const sliced = await chunkDocumentSliced(d);
    t.ok(once.length > 0);
    t.same(sliced, once, `${kind} ${chars} chars: ${once.length} identical chunks`);
    t.same(chunkText(d.content!, kind), once, 'chunkText agrees');
    const analyzer = new Analyzer();
    const a = buildLexicalIndex(once, analyzer);
    const b = await buildLexicalIndexSliced(once, analyzer);
    t.equal(b.vocabularySize, a.vocabularySize);
    t.equal(b.approxBytes, a.approxBytes);
    for (const q of ['photon quark', 'section 40', 'item 3 omega', 'nothing-matches-this']) t.same(b.search(q, 10), a.search(q, 10), `"${q}" ranks the same`);
    for (let i = 0; i < once.length; i += Math.max(1, Math.floor(once.length / 7))) t.same(b.termIds(i), a.termIds(i));
  }
});

t.test('heading paths of a document with thousands of headings', async (t) => {
  const md = Array.from({ length: 3000 }, (_, i) => `${i % 5 === 0 ? '#' : '##'} H${i}\n\n${'word '.repeat(60)}`).join('\n\n');
  const chunks = chunkText(md, 'docx');
  const h1s = [...md.matchAll(/^# (H\d+)$/gm)];
  const h2s = [...md.matchAll(/^## (H\d+)$/gm)];
  t.ok(chunks.length > 500);
  for (const c of chunks) {
    // The path is the last level-1 heading at or before the chunk's start and, after it, the last level-2 one.
    const h1 = h1s.filter((m) => m.index! <= c.char_start).at(-1);
    const h2 = h2s.filter((m) => m.index! <= c.char_start && (!h1 || m.index! > h1.index!)).at(-1);
    t.same(c.heading_path, [h1?.[1], h2?.[1]].filter(Boolean), `chunk ${c.chunk_index}`);
  }
});

t.test('an aborted call stops within a slice with the coded error', async (t) => {
  // Counted in event-loop turns, not milliseconds, so a loaded machine changes nothing: the sliced
  // forms give the loop one turn per slice and check the signal at each, so once aborted they end
  // within a turn or two; a call that ran on to the end would take every remaining slice's turn.
  // The inputs are doubled until the whole call takes at least 10 turns: slices are 8 ms of wall
  // time, so a fast or JIT-warm process (the grouped test runs) finishes the same input in fewer.
  const text = bigText(20_000_000, 7);
  const chunks = chunkDocument(doc(bigText(4_000_000, 3)));
  for (const [what, make] of [
    ['chunking', (times: number) => (s?: AbortSignal) => chunkDocumentSliced(doc(Array(times).fill(text).join('\n\n')), {}, s)],
    ['indexing', (times: number) => (s?: AbortSignal) => buildLexicalIndexSliced(Array(times).fill(chunks).flat(), new Analyzer(), undefined, s)],
  ] as const) {
    let times = 1;
    let run = make(times);
    let whole = await turnsUntilSettled(run());
    while (whole.turns < 10 && times < 16) {
      times *= 2;
      run = make(times);
      whole = await turnsUntilSettled(run());
    }
    t.ok(whole.turns >= 10, `${what}: the whole call (input x${times}) takes ${whole.turns} turns of the event loop`);
    const ac = new AbortController();
    // Aborted in the turn after the call's first slice.
    const aborted = turnsUntilSettled(run(ac.signal), () => ac.abort());
    const { turns, error } = await aborted;
    t.ok(isToolError(error) && error.code === 'TIMEOUT', `${what}: TIMEOUT (${(error as Error)?.message})`);
    t.ok(turns <= 3, `${what}: stopped ${turns} turns after the abort (the whole call takes ${whole.turns})`);
  }
});
