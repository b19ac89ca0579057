/**
 * The 872-page handbook through the REST routes: its text read page by page (offset /
 * next_offset) is all of it, where one answer alone holds a few per cent; its chunks are read
 * with offset / next_offset; and no chunk claims a page the file does not record.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildTestApp } from '../../helper.ts';
import { extractDocx } from '../../../src/extractors/docx/docx.ts';
import { wordRecall } from '../../extractors/word-recall.ts';
import { readCorpus } from '../data-dirs.ts';

const HANDBOOK = readCorpus('docx/handbook-872p.docx');

t.test('handbook: paged text is the whole document; chunks page too, with no made-up page numbers', async (t) => {
  const origin = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' }).end(HANDBOOK);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => origin.close(() => resolve())));
  const host = `127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const document_url = `http://${host}/handbook.docx`;
  const app = await buildTestApp(t, { env: { ALLOWED_HOSTS: host } });
  const post = async (route: string, payload: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: route, payload });
    t.equal(res.statusCode, 200, route);
    return res.json();
  };

  const full = (await extractDocx({ bytes: HANDBOOK, signal: AbortSignal.timeout(120_000) })).content;
  let text = '';
  let first = '';
  let pages = 0;
  for (let offset: number | null = 0; offset !== null; pages++) {
    const body = await post('/v1/extract/docx', { document_url, offset });
    t.equal(body.char_count, full.length);
    if (pages === 0) first = body.text;
    text += body.text;
    offset = body.next_offset;
  }
  t.equal(text, full, `${pages} pages make the whole text`);
  const one = wordRecall(full, first).recall;
  t.ok(one < 0.1, `one answer alone: recall ${one.toFixed(3)}`);
  t.equal(wordRecall(full, text).recall, 1, 'paged: recall 1');

  let chunks = 0;
  let total = 0;
  for (let offset: number | null = 0; offset !== null; ) {
    const body = await post('/v1/documents/chunk', { document_url, offset, max_chunks: 200 });
    total = body.chunk_count;
    chunks += body.chunks.length;
    // The handbook records 54 explicit breaks for 872 pages and no rendered ones: pages are unknown.
    t.ok(body.chunks.every((c: { page_start: number | null; page_end: number | null }) => c.page_start === null && c.page_end === null), `chunks from ${offset}: page null`);
    offset = body.next_offset;
  }
  t.equal(chunks, total, `all ${total} chunks read`);
});
