// The resolve hook of test/setup/bundled-typebox.mjs (runs on Node's loader thread): `typebox` and
// its subpaths resolve to the cached bundle; every other specifier goes on down the chain (test/setup/ts-loader.mjs).
let map = {};

export function initialize(data) {
  map = data.map;
}

export async function resolve(specifier, context, next) {
  const url = map[specifier];
  if (url !== undefined) return { url, format: 'module', shortCircuit: true };
  return next(specifier, context);
}
