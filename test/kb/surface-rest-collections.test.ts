/**
 * Collections over REST through the real app: create (201), duplicate name (409 CONFLICT), bad
 * name (400), list and get with stats, unknown collection (404 NOT_FOUND), delete; and
 * get_system_health shows the knowledge base.
 */
import t from 'tap';
import { buildTestApp } from '../helper.ts';

t.test('collections: create, conflict, bad name, list, get, unknown, delete', async (t) => {
  const app = await buildTestApp(t);

  const created = await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'papers', description: 'Research papers' } });
  t.equal(created.statusCode, 201, created.body);
  const c = created.json();
  t.equal(c.name, 'papers');
  t.equal(c.description, 'Research papers');
  t.equal(c.stats.documents, 0);
  t.equal(c.stats.chunks, 0);

  const dup = await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'papers' } });
  t.equal(dup.statusCode, 409);
  t.equal(dup.json().code, 'CONFLICT');
  t.match(dup.json().error, /papers/);

  for (const name of ['Papers', '-x', 'a b', 'x'.repeat(65), '']) {
    const bad = await app.inject({ method: 'POST', url: '/v1/collections', payload: { name } });
    t.equal(bad.statusCode, 400, `name ${JSON.stringify(name)} refused`);
    t.equal(bad.json().code, 'VALIDATION_ERROR');
    t.match(bad.json().error, /name/);
  }
  const unknownField = await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'x', colour: 'red' } });
  t.equal(unknownField.statusCode, 400);
  t.match(unknownField.json().error, /colour/);

  await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'notes' } });
  const list = await app.inject('/v1/collections');
  t.equal(list.statusCode, 200);
  t.same(list.json().collections.map((x: { name: string }) => x.name).sort(), ['notes', 'papers']);
  t.ok(list.json().collections.every((x: { stats?: unknown }) => x.stats), 'each with stats');

  const got = await app.inject('/v1/collections/papers');
  t.equal(got.statusCode, 200);
  t.equal(got.json().name, 'papers');
  t.same(Object.keys(got.json().stats).sort(), ['bytes', 'chunks', 'documents', 'documents_by_status', 'languages', 'pages', 'types'], 'with stats');

  for (const url of ['/v1/collections/nope', '/v1/collections/nope/documents']) {
    const missing = await app.inject(url);
    t.equal(missing.statusCode, 404, url);
    t.equal(missing.json().code, 'NOT_FOUND', url);
  }
  const missingSearch = await app.inject({ method: 'POST', url: '/v1/collections/nope/search', payload: { query: 'x' } });
  t.equal(missingSearch.statusCode, 404);
  t.equal(missingSearch.json().code, 'NOT_FOUND');
  const badParam = await app.inject('/v1/collections/Bad%20Name');
  t.equal(badParam.statusCode, 400, 'a path parameter is validated like any field');
  t.match(badParam.json().error, /^params\/name/);

  const deleted = await app.inject({ method: 'DELETE', url: '/v1/collections/notes' });
  t.equal(deleted.statusCode, 200);
  t.same(deleted.json(), { name: 'notes', documents: 0, chunks: 0 });
  t.equal((await app.inject('/v1/collections/notes')).statusCode, 404);
  const unknownJob = await app.inject('/v1/jobs/no-such-job');
  t.equal(unknownJob.statusCode, 404);
  t.equal(unknownJob.json().code, 'NOT_FOUND');

  // get_system_health reports the knowledge base.
  const health = (await app.inject('/v1/system/health')).json();
  t.equal(health.features.knowledge_base?.available, true, 'get_system_health shows the knowledge base');
});
