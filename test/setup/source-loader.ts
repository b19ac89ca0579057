/**
 * The Node flags a test gives a server or script it spawns from the TypeScript sources: the test
 * processes' own TypeScript loader (test/setup/ts-loader.mjs says why it is not tsx: about 1 s of
 * CPU less per process that imports the app), then the bundled-TypeBox resolve hook
 * (test/setup/bundled-typebox.mjs says why: about 1.5 s of CPU less per spawned server). Absolute
 * URLs, so a child in a temporary working folder finds both.
 */
export const SOURCE_LOADER_ARGS: readonly string[] = ['--import', import.meta.resolve('./ts-loader.mjs'), '--import', import.meta.resolve('./bundled-typebox.mjs')];
