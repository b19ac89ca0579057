/**
 * Native addons that do not fit the Node.js running the server. npm builds better-sqlite3 from
 * source for the Node.js that ran `npm install`; started by another major (an MCP Inspector run
 * through `npx -p node@22`, a version manager switched after install), loading it throws Node's
 * "compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of
 * Node.js requires NODE_MODULE_VERSION 127". Those numbers mean nothing to most users, so this
 * turns that error into NATIVE_ADDON_MISMATCH naming the Node.js that built the addon, the one
 * running now, and the one command that fixes it.
 *
 * Only addons built against V8's own ABI can mismatch this way. The others (hnswlib-node,
 * onnxruntime-node, sharp, @napi-rs/canvas) use Node-API, which is stable across Node.js
 * majors; test/foundation/native-addons.test.ts reads every installed addon binary and keeps
 * this list complete.
 */
import { createRequire } from 'node:module';
import { toolError, type ToolError } from './errors.ts';
import { redactPaths } from './util/fs-errors.ts';

/** Addons of the server's dependencies that are bound to one NODE_MODULE_VERSION, with what needs each. */
export const ABI_BOUND_ADDONS: ReadonlyArray<{ name: string; neededBy: string; probe: (require: NodeJS.Require) => void }> = [
  {
    name: 'better-sqlite3',
    neededBy: 'the knowledge base',
    // The binding loads on the first `new Database()`, not on require.
    probe: (require) => {
      const Database = require('better-sqlite3') as new (file: string) => { close(): void };
      new Database(':memory:').close();
    },
  },
];

/** process.versions.modules of the Node.js releases an install may meet. */
export const NODE_BY_ABI: Readonly<Record<number, string>> = {
  93: '16',
  108: '18',
  111: '19',
  115: '20',
  120: '21',
  127: '22',
  131: '23',
  137: '24',
  141: '25',
};

/** "Node.js 20 (NODE_MODULE_VERSION 115)", or the bare number for an ABI not in the table. */
export function describeAbi(abi: number): string {
  const major = NODE_BY_ABI[abi];
  return major ? `Node.js ${major} (NODE_MODULE_VERSION ${abi})` : `a Node.js with NODE_MODULE_VERSION ${abi}`;
}

export interface AbiMismatch {
  /** The NODE_MODULE_VERSION the addon was compiled against. */
  built: number;
  /** The NODE_MODULE_VERSION of the Node.js that tried to load it. */
  required: number;
}

/** The two ABI numbers of Node's "compiled against a different Node.js version" error, or null. */
export function parseAbiMismatch(err: unknown): AbiMismatch | null {
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  const m = /NODE_MODULE_VERSION\s+(\d+)\.?\s+This version of Node\.js requires\s+NODE_MODULE_VERSION\s+(\d+)/.exec(message);
  return m ? { built: Number(m[1]), required: Number(m[2]) } : null;
}

export interface Runtime {
  /** process.version, e.g. "v22.23.3". */
  version: string;
  /** process.versions.modules, e.g. "127". */
  abi: string;
}

const currentRuntime = (): Runtime => ({ version: process.version, abi: process.versions.modules });

/**
 * The public message (no paths: it reaches clients) for an addon that could not be loaded: an ABI
 * mismatch names both Node.js versions; any other load failure of a native binary (built for
 * another platform, never built) gets the same fix.
 */
export function nativeAddonMessage(addon: string, neededBy: string, err: unknown, runtime: Runtime = currentRuntime()): string | null {
  const code = err && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  const message = err instanceof Error ? err.message : String(err);
  const now = `Node.js ${runtime.version} (NODE_MODULE_VERSION ${runtime.abi})`;
  const fix = `Fix: run \`npm rebuild\` in the server's folder with the Node.js that starts the server (${runtime.version} here)`;
  const mismatch = parseAbiMismatch(err);
  if (mismatch) {
    const builtMajor = NODE_BY_ABI[mismatch.built];
    return (
      `${addon} (needed by ${neededBy}) was built for ${describeAbi(mismatch.built)}, but the server runs on ${now}. ` +
      `${fix}${builtMajor ? `, or start the server with Node.js ${builtMajor}` : ''}.`
    );
  }
  if (code === 'ERR_DLOPEN_FAILED' || /Could not locate the bindings file/.test(message)) {
    const first = redactPaths(message.split('\n')[0]!).slice(0, 200).replace(/\.+$/, '');
    return `${addon} (needed by ${neededBy}) cannot be loaded by ${now}: ${first}. ${fix}.`;
  }
  return null;
}

/**
 * The first mismatch seen per addon. Node reports the ABI numbers only on the first attempt to load
 * a binary; every later attempt in the process (the knowledge base opening after the start-up
 * probe) fails with a bare "Module did not self-register", so later failures reuse the first text.
 */
const firstMismatch = new Map<string, ToolError>();

/** NATIVE_ADDON_MISMATCH for an addon load failure, or null when `err` is something else. */
export function nativeAddonError(addon: string, neededBy: string, err: unknown, runtime?: Runtime): ToolError | null {
  const message = nativeAddonMessage(addon, neededBy, err, runtime);
  if (message === null) return null;
  if (parseAbiMismatch(err)) {
    const error = toolError('NATIVE_ADDON_MISMATCH', message, err);
    if (!firstMismatch.has(addon)) firstMismatch.set(addon, error);
    return error;
  }
  return firstMismatch.get(addon) ?? toolError('NATIVE_ADDON_MISMATCH', message, err);
}

/**
 * Loads every ABI-bound addon once; one NATIVE_ADDON_MISMATCH per addon that does not fit this
 * Node.js. Other failures are left to the code that uses the addon (it reports them in its own terms).
 */
export function probeNativeAddons(require: NodeJS.Require = createRequire(import.meta.url)): ToolError[] {
  const problems: ToolError[] = [];
  for (const addon of ABI_BOUND_ADDONS) {
    try {
      addon.probe(require);
    } catch (err) {
      const problem = nativeAddonError(addon.name, addon.neededBy, err);
      if (problem) problems.push(problem);
    }
  }
  return problems;
}
