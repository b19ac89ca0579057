// What scripts/build.mjs gives esbuild for the server's ES module build, shared with the
// benchmarks that bundle the current sources the same way (scripts/bench/bundle-like-build.ts):
// build.mjs itself cannot be imported there, as importing it rebuilds dist/.

export const EXTERNAL = [
  // native addons and ONNX
  'hnswlib-node', 'onnxruntime-node', 'onnxruntime-common', '@huggingface/transformers', '@napi-rs/canvas', 'better-sqlite3', 'sharp',
  // read their own files or start workers from their package folders
  '@fastify/swagger-ui', '@fastify/static', 'tesseract.js', '@tesseract.js-data/*', 'unpdf', 'pdfjs-dist', 'pino', 'pino-roll', 'thread-stream',
  // loaded on first use (undici: esbuild's interop would hide a bundled CommonJS module's named
  // exports from a dynamic import)
  'undici', 'jsdom', 'linkedom', 'mammoth', 'xlsx', 'eld', 'eld/*',
  // its encoding tables (~0.5 MB of the bundle, parsed at every start when bundled) are required
  // on the first decode of a legacy charset; left in node_modules they load only then
  'iconv-lite',
  // only a YAML API_KEYS_FILE needs it (src/auth/key-file.ts requires it then)
  'yaml',
  // Fastify's default compilers: src/app.ts gives it its own, so these are never required, and
  // bundled they would be compiled at every start all the same (Ajv and fast-json-stringify, ~0.6 MB)
  '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler',
  // the ingestion queue (REDIS_URL only): BullMQ reads its Lua scripts from its package
  'bullmq',
  // --reload and the source fallback
  'tsx', 'tsx/*',
];

// esbuild writes a regular expression literal with \p{...} as `new RegExp(...)` for node targets
// (a property an older Node lacks then fails only when reached), which constructs it on every
// evaluation: per token in the PDF text-layer check. Node 20's ICU has every property used here.
export const SUPPORTED = { 'regexp-unicode-property-escapes': true };

/** The ES module build's options (add entryPoints, outdir and the logging/output choices). */
export const ESM_BUNDLE = {
  outbase: '.',
  entryNames: '[dir]/[name]',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  supported: SUPPORTED,
  external: EXTERNAL,
  // Bundled CommonJS packages call require(); ESM output has none, so give each file one.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
};
