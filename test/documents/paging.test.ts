/**
 * No silent caps: through the REST routes, a caller pages through any document's text (offset,
 * max_chars, next_offset), through every chunk (offset, max_chunks) and through every row of
 * every table (table_offset, row_offset), and the pages put together are the whole document.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { MAX_CONTENT_CHARS, MAX_TABLE_ROW_CHARS } from '../../src/tools/schemas/documents.ts';
import { DEFAULT_LISTED_CHUNKS } from '../../src/tools/chunk-document.ts';
import { pageText } from '../../src/tools/tool-output.ts';

/** About 130,000 characters of numbered words, with an emoji (a surrogate pair) across the first page's end. */
function longText(): string {
  const words: string[] = [];
  let length = 0;
  for (let i = 0; length < 130_000; i++) {
    const w = `word${String(i).padStart(5, '0')}`;
    words.push(w);
    length += w.length + 1;
  }
  const text = words.join(' ');
  // The pair starts at the last character of the first page: the page must stop before it.
  return `${text.slice(0, MAX_CONTENT_CHARS - 1)}\u{1F600}${text.slice(MAX_CONTENT_CHARS - 1)}`;
}

const CSV_ROWS = 30_000;
function bigCsv(): { text: string; rows: string[][] } {
  const rows: string[][] = [];
  for (let i = 0; i < CSV_ROWS; i++) rows.push([`id-${i}`, `name number ${i} of the list`, `city ${i % 97}`, `note ${i * 7}`]);
  return { text: ['id,name,city,note', ...rows.map((r) => r.join(','))].join('\n') + '\n', rows };
}

const TEXT = longText();
const CSV = bigCsv();
const FILES: Record<string, { type: string; body: string }> = {
  '/long.txt': { type: 'text/plain; charset=utf-8', body: TEXT },
  '/big.csv': { type: 'text/csv; charset=utf-8', body: CSV.text },
};

t.test('pageText never splits a surrogate pair and always moves on', async (t) => {
  const s = 'ab\u{1F600}cd';
  t.same(pageText(s, 0, 3), { text: 'ab', offset: 0, next_offset: 2, truncated: true, length: 6 });
  t.same(pageText(s, 2, 1), { text: '\u{1F600}', offset: 2, next_offset: 4, truncated: true, length: 6 }, 'a one-char page takes the whole pair');
  t.same(pageText(s, 3, 10), { text: '\u{1F600}cd', offset: 2, next_offset: null, truncated: false, length: 6 }, 'an offset inside a pair moves to its start');
  t.same(pageText(s, 99, 10), { text: '', offset: 6, next_offset: null, truncated: false, length: 6 }, 'past the end: empty, at the end');
});

t.test('REST: text, chunks and table rows page through the whole document', async (t) => {
  const origin = http.createServer((req, res) => {
    const f = FILES[req.url ?? ''];
    if (!f) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': f.type }).end(f.body);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => origin.close(() => resolve())));
  const host = `127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const url = (p: string) => `http://${host}${p}`;
  const app = await buildTestApp(t, { env: { ALLOWED_HOSTS: host } });
  const post = async (route: string, payload: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: route, payload });
    t.equal(res.statusCode, 200, `${route} ${JSON.stringify(payload).slice(-60)}`);
    return { body: res.json(), bytes: res.body.length };
  };

  // Text: pages of at most 50,000 characters, cut before the surrogate pair, joined = the text.
  let text = '';
  let offset: number | null = 0;
  const offsets: number[] = [];
  while (offset !== null) {
    const { body } = await post('/v1/documents/process', { document_url: url('/long.txt'), offset });
    t.equal(body.offset, offset);
    t.equal(body.content_length, TEXT.length);
    t.ok(body.content.length <= MAX_CONTENT_CHARS);
    t.equal(body.truncated, body.next_offset !== null);
    offsets.push(offset);
    text += body.content;
    offset = body.next_offset;
  }
  t.same(offsets, [0, MAX_CONTENT_CHARS - 1, 2 * MAX_CONTENT_CHARS - 1], 'the first page stops before the pair');
  t.equal(text, TEXT, 'the pages put together are the whole text');

  // A smaller page size, from the middle.
  const mid = await post('/v1/documents/process', { document_url: url('/long.txt'), offset: 60_000, max_chars: 1000 });
  t.equal(mid.body.content, TEXT.slice(60_000, 61_000));
  t.equal(mid.body.next_offset, 61_000);

  // Chunks: the default page is bounded; offset / next_offset reach every chunk once.
  const first = await post('/v1/documents/chunk', { document_url: url('/long.txt'), max_chunks: 7 });
  const total = first.body.chunk_count;
  t.ok(total > 14, `${total} chunks`);
  const seen: number[] = [];
  let next: number | null = 0;
  while (next !== null) {
    const { body } = await post('/v1/documents/chunk', { document_url: url('/long.txt'), offset: next, max_chunks: 7 });
    t.equal(body.chunk_count, total);
    t.equal(body.offset, next);
    t.ok(body.chunks.length <= 7);
    seen.push(...body.chunks.map((c: { chunk_index: number }) => c.chunk_index));
    next = body.next_offset;
  }
  t.same(seen, [...Array(total).keys()], 'every chunk once, in order');
  const all = await post('/v1/documents/chunk', { document_url: url('/long.txt') });
  t.equal(all.body.chunks.length, Math.min(total, DEFAULT_LISTED_CHUNKS));
  const tooMany = await app.inject({ method: 'POST', url: '/v1/documents/chunk', payload: { document_url: url('/long.txt'), max_chunks: 1001 } });
  t.equal(tooMany.statusCode, 400, 'max_chunks is bounded');

  // Table rows: every row, paged by the row-data budget, the same way in both tools.
  for (const route of ['/v1/extract/csv', '/v1/documents/process']) {
    const rows: unknown[][] = [];
    let cursor: { table_offset: number; row_offset: number } | null = { table_offset: 0, row_offset: 0 };
    let calls = 0;
    while (cursor) {
      const { body, bytes } = await post(route, { document_url: url('/big.csv'), ...cursor });
      calls++;
      t.ok(bytes < MAX_TABLE_ROW_CHARS + 100_000, `${route}: answer ${bytes} bytes`);
      const table = body.tables[0];
      t.equal(table.row_count, CSV_ROWS);
      t.equal(table.row_offset, cursor.row_offset);
      t.same(table.headers, ['id', 'name', 'city', 'note']);
      t.equal(table.truncated === true, body.next_row_offset !== null);
      t.ok(table.content.length <= 5000, 'the preview stays small');
      rows.push(...table.rows);
      cursor = body.next_table_offset === null ? null : { table_offset: body.next_table_offset, row_offset: body.next_row_offset };
    }
    t.ok(calls >= 2, `${route}: ${calls} pages`);
    t.same(rows, CSV.rows, `${route}: every row once, in order`);
  }
});
