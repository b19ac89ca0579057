/**
 * The reading context of a hit: 'section' returns the hit's heading section (subsections
 * included, neighbouring sections not), 'neighbors' the adjacent chunks; both centred on the hit,
 * overlapping chunk text joined once, cut to context_chars with `truncated`, and read in bounded
 * windows (a hit in a 3,000-chunk document reads a few windows, never the document).
 */
import t from 'tap';
import { searchCollection } from '../../src/kb/collection-search.ts';
import { ContextReader, CONTEXT_WINDOW, contextBudget, hitContext } from '../../src/kb/hit-context.ts';
import { filler, openFixture, signal } from './search-fixtures.ts';

const HIT = 'The calibration of the peristaltic dosimeter uses a graduated flask.';

function manual(t: Parameters<typeof openFixture>[0], overlap = 0) {
  const fx = openFixture(t, 'manual');
  const chunks = [
    { text: `Intro. ${filler(1, 12)}`, heading_path: ['Manual', 'Intro'] },
    { text: `Setup one. ${filler(2, 12)}`, heading_path: ['Manual', 'Setup'] },
    { text: `Setup two. ${filler(3, 12)}`, heading_path: ['Manual', 'Setup'] },
    { text: HIT, heading_path: ['Manual', 'Setup'] },
    { text: `Setup sub. ${filler(4, 12)}`, heading_path: ['Manual', 'Setup', 'Pumps'] },
    { text: `Setup four. ${filler(5, 12)}`, heading_path: ['Manual', 'Setup'] },
    { text: `Usage. ${filler(6, 12)}`, heading_path: ['Manual', 'Usage'] },
  ];
  const { chunks: rows } = fx.add({ key: 'https://docs.example/manual.pdf', title: 'Manual', chunks, overlap });
  return { fx, rows };
}

t.test("context 'section': the contiguous run under the hit's heading path, in order", async (t) => {
  const { fx, rows } = manual(t);
  const res = await searchCollection(fx.deps(), { query: 'peristaltic dosimeter calibration', top_k: 1, context: 'section' }, signal());
  const hit = res.results[0]!;
  t.equal(hit.text, HIT);
  t.equal(hit.context?.kind, 'section');
  t.same(hit.context?.chunk_ids, [rows[1]!.id, rows[2]!.id, rows[3]!.id, rows[4]!.id, rows[5]!.id], 'Setup and its subsection; not Intro, not Usage');
  t.equal(hit.context?.truncated, false);
  const text = hit.context!.text;
  t.ok(text.startsWith('Setup one.') && text.includes(HIT) && text.trimEnd().endsWith(rows[5]!.text));
  t.notMatch(text, /Intro\.|Usage\./);
  t.ok(text.indexOf('Setup two.') < text.indexOf(HIT) && text.indexOf(HIT) < text.indexOf('Setup sub.'), 'document order');
  t.ok(typeof res.timings_ms.context_ms === 'number');
});

t.test("context 'neighbors': adjacent chunks either side, whatever their headings, up to the budget", async (t) => {
  const { fx, rows } = manual(t);
  const all = await searchCollection(fx.deps(), { query: 'peristaltic dosimeter', top_k: 1, context: 'neighbors', context_chars: 8000 }, signal());
  t.same(all.results[0]!.context?.chunk_ids, rows.map((r) => r.id), 'the whole (small) document');
  t.equal(all.results[0]!.context?.truncated, false);

  // A budget for the hit and about one chunk more: one before, part of one after, centred.
  const budget = HIT.length + rows[2]!.text.length + 2 + 30;
  const some = await searchCollection(fx.deps(), { query: 'peristaltic dosimeter', top_k: 1, context: 'neighbors', context_chars: budget }, signal());
  const ctx = some.results[0]!.context!;
  t.same(ctx.chunk_ids, [rows[2]!.id, rows[3]!.id, rows[4]!.id]);
  t.equal(ctx.truncated, true);
  t.ok(ctx.text.length <= budget, `${ctx.text.length} <= ${budget}`);
  t.ok(ctx.text.startsWith('Setup two.') && ctx.text.includes(HIT) && ctx.text.includes('Setup sub.'));
});

t.test('overlapping chunks are joined by their offsets: the carried text appears once', async (t) => {
  const { fx, rows } = manual(t, 25);
  t.ok(rows[3]!.text.length > HIT.length, 'chunks carry the end of the previous one');
  const reader = new ContextReader(fx.store);
  const ctx = hitContext(reader, rows[3]!, 'section', 8000);
  const carried = rows[2]!.text.slice(-25);
  t.equal(ctx.text.split(carried).length - 1, 1, 'the overlap is not repeated');
  t.ok(ctx.text.includes(HIT));
});

t.test('a hit in a 3,000-chunk document reads a few windows, and a long hit is cut to the budget', async (t) => {
  const fx = openFixture(t, 'big');
  const { chunks } = fx.add({
    key: 'https://docs.example/big.pdf',
    chunks: Array.from({ length: 3000 }, (_, i) => ({ text: `${filler(i, 30)} #${i}`, heading_path: ['Big'] })),
  });
  const reader = new ContextReader(fx.store);
  const ctx = hitContext(reader, chunks[1500]!, 'section', 2000);
  t.equal(ctx.truncated, true);
  t.ok(ctx.text.length <= 2000);
  t.ok(ctx.chunk_ids.includes(chunks[1500]!.id));
  const at = ctx.chunk_ids.indexOf(chunks[1500]!.id);
  t.ok(Math.abs(at - (ctx.chunk_ids.length - 1 - at)) <= 1, 'centred: as many chunks before as after');
  t.ok(reader.reads <= 3, `read ${reader.reads} windows of ${CONTEXT_WINDOW}`);

  const long = { ...chunks[10]!, text: 'x'.repeat(5000) };
  const cut = hitContext(new ContextReader(fx.store), long, 'neighbors', 300);
  t.equal(cut.text.length, 300);
  t.equal(cut.truncated, true);
  t.same(cut.chunk_ids, [long.id]);

  t.equal(contextBudget(undefined), 2000);
  t.equal(contextBudget(99_999), 8000);
  t.equal(contextBudget(0), 1);
});

t.test("context 'none' (the default) adds nothing", async (t) => {
  const { fx } = manual(t);
  const res = await searchCollection(fx.deps(), { query: 'peristaltic dosimeter' }, signal());
  t.notOk('context' in res.results[0]!);
  t.notOk('context_ms' in res.timings_ms);
});
