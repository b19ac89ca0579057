// Entry of an ONNX model worker thread run from the TypeScript sources. Workers do not inherit the
// parent's TypeScript loader, so the worker's TypeScript is loaded through tsx here.
//
// RAG_EXTRACT_CHILD_IMPORTS (space-separated module URLs, set by the test processes only:
// test/setup/test-process.mjs) names the loader to import instead, as in the extraction child
// (src/extraction/extract-child-boot.mjs): the test suite's own TypeScript loader, about 0.4 s of
// CPU less per worker than tsx. Unset (every user's run), tsx as before.
const imports = process.env.RAG_EXTRACT_CHILD_IMPORTS?.split(' ').filter(Boolean) ?? [];
if (imports.length > 0) {
  for (const url of imports) await import(url);
  await import('./onnx-worker.ts');
} else {
  const { tsImport } = await import('tsx/esm/api');
  await tsImport('./onnx-worker.ts', import.meta.url);
}
