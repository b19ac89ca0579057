// Entry of an ONNX model worker thread run from the TypeScript sources (see src/util/ts-worker-boot.mjs).
import { importTs } from '../../util/ts-worker-boot.mjs';

await importTs('./onnx-worker.ts', import.meta.url);
