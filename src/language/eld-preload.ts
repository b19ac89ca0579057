/**
 * On a Node without require() of ES modules (before 20.19 and 22.12), eld's model cannot be loaded
 * synchronously later, so it is imported here, as this module loads (a top-level await).
 *
 * The start bundle (dist/server.cjs) is CommonJS, which has no top-level await; it runs only where
 * require() of ES modules works (bin/rag-document-server.js checks), so scripts/build.mjs gives it
 * this module with `preloadedEld` always undefined.
 */

const requireModule = (process.features as { require_module?: boolean }).require_module === true;

export const preloadedEld: typeof import('eld/small').eld | undefined = requireModule ? undefined : (await import('eld/small')).eld;
