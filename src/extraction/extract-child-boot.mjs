// Entry of an extraction child run from the TypeScript sources. A forked child gets an explicit,
// minimal execArgv (no inherited loaders), so tsx is registered here, for the whole process: test
// extractor modules loaded later are TypeScript too.
//
// RAG_EXTRACT_CHILD_IMPORTS (space-separated module URLs, set by the test processes only:
// test/setup/test-process.mjs) names the loader to import instead: the test suite's own TypeScript
// loader, the one its processes and the servers they spawn from the sources already run under
// (same esbuild transform as tsx, transpiled output cached on disk), which starts a child for about
// 0.5 s of CPU less than tsx. Unset (every user's run), tsx as before.
const imports = process.env.RAG_EXTRACT_CHILD_IMPORTS?.split(' ').filter(Boolean) ?? [];
if (imports.length > 0) {
  for (const url of imports) await import(url);
} else {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('./extract-child.ts');
