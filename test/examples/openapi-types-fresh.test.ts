/**
 * examples/client/openapi-types.ts is what openapi-typescript makes of the committed
 * openapi/openapi.json: regenerated in memory and compared, so a tool change that updated the
 * OpenAPI document but not the client's types fails here, saying how to fix it.
 */
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { generateTypesFromCommittedDocument, OPENAPI_TYPES_FILE } from '../../examples/client/generate-types.ts';

t.test('the committed REST client types match openapi/openapi.json', async (t) => {
  const [committed, fresh] = await Promise.all([readFile(OPENAPI_TYPES_FILE, 'utf8'), generateTypesFromCommittedDocument()]);
  if (committed === fresh) return t.pass('up to date');
  const a = committed.split('\n');
  const b = fresh.split('\n');
  const line = a.findIndex((l, i) => l !== b[i]);
  t.fail(
    `examples/client/openapi-types.ts is stale: run npm run openapi (first difference at line ${line + 1}: ` +
      `committed ${JSON.stringify(a[line] ?? '<end>')}, generated ${JSON.stringify(b[line] ?? '<end>')})`,
  );
});
