/**
 * Fields that travel as strings (querystring, form fields) are converted to their schema's types,
 * but an integer field is never truncated: offset=1.5 is a 400 VALIDATION_ERROR, not offset 1.
 * And a collection description is limited to MAX_DESCRIPTION_CHARS, which its message states.
 */
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { MAX_DESCRIPTION_CHARS } from '../../src/kb/types.ts';

t.test('integer query fields: 1.5 and 1e0 are refused, 2 and +2 accepted', async (t) => {
  const app = await buildTestApp(t);
  t.equal((await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'c1' } })).statusCode, 201);
  for (const url of ['/v1/collections/c1/documents?offset=1.5', '/v1/jobs?offset=1.5', '/v1/jobs?limit=2.5', '/v1/jobs?offset=1e0']) {
    const r = await app.inject({ method: 'GET', url });
    t.equal(r.statusCode, 400, url);
    t.match(r.json(), { code: 'VALIDATION_ERROR', error: /querystring\/(offset|limit) must be integer/ }, url);
  }
  for (const url of ['/v1/collections/c1/documents?offset=2', '/v1/jobs?offset=%2B2']) {
    t.equal((await app.inject({ method: 'GET', url })).statusCode, 200, url);
  }
});

t.test('a description up to MAX_DESCRIPTION_CHARS is kept; longer says the real limit', async (t) => {
  const app = await buildTestApp(t);
  const ok = await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'long', description: 'd'.repeat(MAX_DESCRIPTION_CHARS) } });
  t.equal(ok.statusCode, 201);
  t.equal(ok.json().description.length, MAX_DESCRIPTION_CHARS);
  const over = await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'over', description: 'd'.repeat(MAX_DESCRIPTION_CHARS + 1) } });
  t.equal(over.statusCode, 400);
  t.match(over.json(), { code: 'VALIDATION_ERROR', error: new RegExp(`description must not have more than ${MAX_DESCRIPTION_CHARS} characters`) });
});
