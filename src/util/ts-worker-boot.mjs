// Loads a TypeScript worker entry from the sources (the compiled server starts its dist/ bundle
// instead). Workers do not inherit the parent's TypeScript loader, so one is loaded here.
//
// RAG_EXTRACT_CHILD_IMPORTS (space-separated module URLs, set by the test processes only:
// test/setup/test-process.mjs) names the loader to import instead, as in the extraction child
// (src/extraction/extract-child-boot.mjs): the test suite's own TypeScript loader, about 0.4 s of
// CPU less per worker than tsx. Unset (every user's run), tsx.
export async function importTs(specifier, base) {
  const imports = process.env.RAG_EXTRACT_CHILD_IMPORTS?.split(' ').filter(Boolean) ?? [];
  if (imports.length > 0) {
    for (const url of imports) await import(url);
    await import(new URL(specifier, base).href);
  } else {
    const { tsImport } = await import('tsx/esm/api');
    await tsImport(specifier, base);
  }
}
