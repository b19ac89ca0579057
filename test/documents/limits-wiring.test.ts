/**
 * The decode-size limits reach the extractors from config, and the URL cap is said, not silent:
 * through the REST route (and so through the extraction child), a document with more distinct
 * URLs than urls[] keeps reports the count, and CSV_MAX_COLUMNS / TEXT_MAX_CHARS set in the
 * environment change what comes back.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { MAX_URLS } from '../../src/extractors/shared/urls.ts';

const LINKS = MAX_URLS + 100;
const FILES: Record<string, { type: string; body: string }> = {
  '/links.txt': {
    type: 'text/plain; charset=utf-8',
    body: Array.from({ length: LINKS }, (_, i) => `see https://example.com/page/${i} for part ${i}`).join('\n'),
  },
  '/wide.csv': { type: 'text/csv', body: `${Array.from({ length: 40 }, (_, i) => `c${i}`).join(',')}\n${Array.from({ length: 40 }, (_, i) => i).join(',')}\n` },
  '/long.txt': { type: 'text/plain; charset=utf-8', body: 'heron '.repeat(20_000) },
};

t.test('limits from config reach the extractor; urls[] cap reports the total', async (t) => {
  const origin = http.createServer((req, res) => {
    const f = FILES[req.url ?? ''];
    if (!f) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': f.type }).end(f.body);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => origin.close(() => resolve())));
  const host = `127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const app = await buildTestApp(t, { env: { ALLOWED_HOSTS: host, CSV_MAX_COLUMNS: '10', TEXT_MAX_CHARS: '50000' } });
  const call = async (route: string, p: string) => {
    const res = await app.inject({ method: 'POST', url: route, payload: { document_url: `http://${host}${p}` } });
    t.equal(res.statusCode, 200, `${route} ${p}`);
    return res.json();
  };

  const links = await call('/v1/documents/process', '/links.txt');
  t.equal(links.urls.length, MAX_URLS, 'urls[] keeps the first MAX_URLS');
  t.equal(links.urls[0].url, 'https://example.com/page/0', 'in order of appearance');
  t.equal(links.metadata.urls_truncated, true, 'the cut is said');
  t.equal(links.metadata.url_total, LINKS, 'with the number of distinct URLs found');

  const wide = await call('/v1/extract/csv', '/wide.csv');
  t.equal(wide.tables[0].metadata.columns_truncated ?? wide.tables[0].metadata.truncated, true, 'CSV_MAX_COLUMNS=10 cuts a 40-column row');
  t.ok(wide.tables[0].headers.length <= 10, 'at most 10 columns kept');

  const long = await call('/v1/documents/process', '/long.txt');
  t.ok(long.content_length <= 50_000, 'TEXT_MAX_CHARS=50000 bounds a 120,000-character text');
  t.equal(long.metadata.truncated, true, 'and says so');
});
