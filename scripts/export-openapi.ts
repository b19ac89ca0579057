/** `npm run openapi`: writes openapi/openapi.json from the tool registry (atomically). */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { generateOpenApi, OPENAPI_FILE, serializeOpenApi } from '../src/openapi.ts';

const target = fileURLToPath(OPENAPI_FILE);
const doc = await generateOpenApi();
await mkdir(path.dirname(target), { recursive: true });
const tmp = `${target}.${process.pid}.tmp`;
await writeFile(tmp, serializeOpenApi(doc));
await rename(tmp, target);
const paths = Object.keys((doc as { paths?: object }).paths ?? {}).length;
process.stdout.write(`wrote ${path.relative(process.cwd(), target)} (${paths} paths)\n`);
