// Entry of an ONNX model worker thread. Workers do not inherit the parent's TypeScript loader,
// so the worker's TypeScript is loaded through tsx here.
import { tsImport } from 'tsx/esm/api';

await tsImport('./onnx-worker.ts', import.meta.url);
