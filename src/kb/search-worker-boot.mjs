// Entry of a search worker thread run from the TypeScript sources (see src/util/ts-worker-boot.mjs);
// the compiled server starts dist/src/kb/search-worker.js directly.
import { importTs } from '../util/ts-worker-boot.mjs';

await importTs('./search-worker.ts', import.meta.url);
