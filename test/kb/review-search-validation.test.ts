/**
 * Search input that the schema alone cannot refuse, through the real REST app: a page range whose
 * start is after its end is a 400 VALIDATION_ERROR, not a silent match of chunks spanning it.
 */
import t from 'tap';
import { buildTestApp } from '../helper.ts';

t.test('search: page_from after page_to is refused with VALIDATION_ERROR', async (t) => {
  const app = await buildTestApp(t);
  const created = await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'pages' } });
  t.equal(created.statusCode, 201, created.body);

  const bad = await app.inject({
    method: 'POST',
    url: '/v1/collections/pages/search',
    payload: { query: 'total', filters: { page_from: 3, page_to: 1 } },
  });
  t.equal(bad.statusCode, 400, bad.body);
  t.equal(bad.json().code, 'VALIDATION_ERROR');
  t.match(bad.json().error, /page_from/);

  const ok = await app.inject({
    method: 'POST',
    url: '/v1/collections/pages/search',
    payload: { query: 'total', filters: { page_from: 2, page_to: 2 } },
  });
  t.equal(ok.statusCode, 200, ok.body);
  t.equal(ok.json().confidence, 'none');
});
