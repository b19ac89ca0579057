// Entry of a search worker thread run from the TypeScript sources (the compiled server starts
// dist/src/kb/search-worker.js directly). Workers do not inherit the parent's TypeScript loader:
// the test processes name theirs in RAG_EXTRACT_CHILD_IMPORTS (see
// src/retrieval/embedders/onnx-worker-boot.mjs); otherwise tsx loads the worker.
const imports = process.env.RAG_EXTRACT_CHILD_IMPORTS?.split(' ').filter(Boolean) ?? [];
if (imports.length > 0) {
  for (const url of imports) await import(url);
  await import('./search-worker.ts');
} else {
  const { tsImport } = await import('tsx/esm/api');
  await tsImport('./search-worker.ts', import.meta.url);
}
