/**
 * The Node flags a test gives a server it spawns from the TypeScript sources: tsx, then the
 * bundled-TypeBox resolve hook the test processes run with (test/setup/bundled-typebox.mjs says
 * why: about 1.5 s of CPU less per spawned server). Absolute URLs, so a child in a temporary
 * working folder finds both.
 */
export const SOURCE_LOADER_ARGS: readonly string[] = ['--import', import.meta.resolve('tsx'), '--import', import.meta.resolve('./bundled-typebox.mjs')];
