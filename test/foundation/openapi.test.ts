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
