/**
 * The knowledge-base REST surface in the OpenAPI document the app serves: resource paths with
 * their path parameters, request and response schemas from the tool declarations, the declared
 * success statuses (201, 202), coded error responses, and the SSE events route.
 */
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { tools } from '../../src/tools/index.ts';

t.test('OpenAPI: KB paths, path parameters, statuses, schemas and the event stream', async (t) => {
  const app = await buildTestApp(t);
  const doc = (await app.inject('/openapi.json')).json();
  const op = (path: string, method: string) => doc.paths[path]?.[method];
  const expected: Array<[string, string, string, string]> = [
    ['/v1/collections', 'post', 'create_collection', '201'],
    ['/v1/collections', 'get', 'list_collections', '200'],
    ['/v1/collections/{name}', 'get', 'get_collection', '200'],
    ['/v1/collections/{name}', 'delete', 'delete_collection', '200'],
    ['/v1/collections/{name}/documents', 'post', 'ingest_documents', '202'],
    ['/v1/collections/{name}/documents', 'get', 'list_documents', '200'],
    ['/v1/collections/{name}/documents/{document_id}', 'get', 'get_document', '200'],
    ['/v1/collections/{name}/documents/{document_id}', 'delete', 'delete_document', '200'],
    ['/v1/collections/{name}/documents/{document_id}/chunks', 'get', 'list_document_chunks', '200'],
    ['/v1/collections/{name}/documents/{document_id}/reingest', 'post', 'reingest_document', '202'],
    ['/v1/collections/{name}/search', 'post', 'search_collection', '200'],
    ['/v1/jobs', 'get', 'list_jobs', '200'],
    ['/v1/jobs/{job_id}', 'get', 'get_job', '200'],
    ['/v1/jobs/{job_id}/cancel', 'post', 'cancel_job', '200'],
    ['/v1/collections/{name}/sources', 'get', 'list_sources', '200'],
    ['/v1/collections/{name}/sources', 'post', 'add_source', '201'],
    ['/v1/collections/{name}/sources/{source_id}', 'patch', 'update_source', '200'],
    ['/v1/collections/{name}/sources/{source_id}', 'delete', 'delete_source', '200'],
    ['/v1/collections/{name}/sources/{source_id}/sync', 'post', 'sync_source', '202'],
  ];
  for (const [path, method, id, status] of expected) {
    const o = op(path, method);
    t.equal(o?.operationId, id, `${method.toUpperCase()} ${path} is ${id}`);
    t.same(o.tags, ['knowledge_base']);
    const tool = tools.find((x) => x.name === id)!;
    t.same(o.responses[status].content['application/json'].schema, JSON.parse(JSON.stringify(tool.output)), `${id}: ${status} with the output schema`);
    t.notOk(status !== '200' && o.responses['200'], `${id}: only its declared success status`);
    t.ok(o.responses['404'], `${id}: 404 documented`);
    const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const params = (o.parameters ?? []) as Array<{ name: string; in: string; required?: boolean; schema: unknown }>;
    t.same(params.filter((p) => p.in === 'path').map((p) => p.name), inPath, `${id}: path parameters`);
    for (const p of params.filter((x) => x.in === 'path')) {
      t.equal(p.required, true);
      // @fastify/swagger lifts description and examples from the schema onto the parameter.
      const { description: _d, examples: _e, ...declared } = JSON.parse(JSON.stringify((tool.input.properties as Record<string, unknown>)[p.name]));
      t.same(p.schema, declared, `${id}: ${p.name} schema as declared`);
    }
  }
  t.ok(op('/v1/collections', 'post').responses['409'], 'create_collection documents 409 CONFLICT');
  t.ok(op('/v1/jobs/{job_id}/cancel', 'post').responses['409'], 'cancel_job documents 409 CONFLICT');
  t.same(
    op('/v1/jobs', 'get').parameters.map((p: { name: string }) => p.name),
    ['collection', 'status', 'offset', 'limit'],
    'list_jobs querystring',
  );
  const search = op('/v1/collections/{name}/search', 'post').requestBody.content['application/json'].schema;
  t.ok(search.properties.filters && search.properties.context, 'search body with filters and context');
  t.notOk('name' in search.properties, 'the collection name travels in the path');
  t.same(Object.keys(op('/v1/collections/{name}/documents', 'post').requestBody.content), ['application/json', 'multipart/form-data', 'application/octet-stream']);

  const events = op('/v1/jobs/{job_id}/events', 'get');
  t.equal(events.operationId, 'job_events');
  t.ok(events.responses['200'].content['text/event-stream'], 'documented as text/event-stream');
  t.ok(events.responses['404'] && events.responses['401']);
  t.same(events.parameters.map((p: { name: string; in: string }) => [p.name, p.in]), [['job_id', 'path']]);
  t.ok(doc.tags.some((x: { name: string }) => x.name === 'knowledge_base'));
});
