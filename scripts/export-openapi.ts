/**
 * `npm run openapi`: writes openapi/openapi.json from the tool registry, then the typed REST
 * client's types (examples/client/openapi-types.ts) from that document, each atomically.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { generateOpenApi, OPENAPI_FILE, serializeOpenApi } from '../src/openapi.ts';
import { generateOpenApiTypes, OPENAPI_TYPES_FILE } from '../examples/client/generate-types.ts';

async function writeAtomically(target: string, text: string): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, target);
}

const target = fileURLToPath(OPENAPI_FILE);
const doc = await generateOpenApi();
await writeAtomically(target, serializeOpenApi(doc));
const paths = Object.keys((doc as { paths?: object }).paths ?? {}).length;
process.stdout.write(`wrote ${path.relative(process.cwd(), target)} (${paths} paths)\n`);

// From the serialized document, exactly as committed, so the staleness test sees the same input.
const typesTarget = fileURLToPath(OPENAPI_TYPES_FILE);
await writeAtomically(typesTarget, await generateOpenApiTypes(JSON.parse(serializeOpenApi(doc)) as object));
process.stdout.write(`wrote ${path.relative(process.cwd(), typesTarget)}\n`);
