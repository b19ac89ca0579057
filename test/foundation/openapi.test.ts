import { readFileSync } from 'node:fs';
import t from 'tap';
import { generateOpenApi, OPENAPI_FILE, serializeOpenApi } from '../../src/openapi.ts';
import { tools } from '../../src/tools/index.ts';

t.test('openapi/openapi.json is up to date (run `npm run openapi` after changing a tool)', async (t) => {
  const committed = readFileSync(OPENAPI_FILE, 'utf8');
  const current = serializeOpenApi(await generateOpenApi());
  t.ok(committed === current, 'openapi/openapi.json is stale: run `npm run openapi`');
  const doc = JSON.parse(committed);
  const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) => Object.values(p).map((o) => o.operationId));
  for (const tool of tools) t.ok(ids.includes(tool.name), `${tool.name} is documented`);
});

t.test('one hit shape: a retrieve_chunks hit is a search_collection hit without its knowledge-base place', async (t) => {
  const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
  const hitOf = (p: string) => doc.paths[p].post.responses['200'].content['application/json'].schema.properties.results.items;
  const document = hitOf('/v1/documents/retrieve');
  const collection = hitOf('/v1/collections/{name}/search');
  const extra = Object.keys(collection.properties).filter((k) => !(k in document.properties));
  t.same(extra.sort(), ['chunk_id', 'document_id', 'title'], 'search_collection adds only where the chunk lives');
  for (const [name, schema] of Object.entries(document.properties)) t.same(collection.properties[name], schema, `${name} is the same field in both`);
  t.same(
    document.required.slice().sort(),
    collection.required.filter((k: string) => !extra.includes(k)).sort(),
    'the same fields are required',
  );
});
