/**
 * Native addons built for another Node.js (issue 24): the message names the Node.js that built the
 * addon, the one running, and `npm rebuild`; the knowledge base answers it as NATIVE_ADDON_MISMATCH
 * on every surface while the per-document tools keep working; and the list of ABI-bound addons the
 * start-up probe loads covers every installed runtime addon that is not Node-API.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import t from 'tap';
import { ERROR_STATUS } from '../../src/errors.ts';
import { KbStore } from '../../src/kb/kb-store.ts';
import { ABI_BOUND_ADDONS, describeAbi, nativeAddonError, nativeAddonMessage, NODE_BY_ABI, parseAbiMismatch, probeNativeAddons } from '../../src/native-addons.ts';
import { createServices } from '../../src/services.ts';
import { PROJECT_ROOT } from '../../src/project-root.ts';
import { buildTestApp, testConfig } from '../helper.ts';

/** What Node 22 throws when it loads a better-sqlite3 that npm built under Node 20 (its exact text). */
function dlopenMismatch(built = 115, required = 127): Error {
  const err = new Error(
    `The module '/home/me/rag-document-server/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\n` +
      `was compiled against a different Node.js version using\nNODE_MODULE_VERSION ${built}. This version of Node.js requires\n` +
      `NODE_MODULE_VERSION ${required}. Please try re-compiling or re-installing\nthe module (for instance, using \`npm rebuild\` or \`npm install\`).`,
  );
  (err as NodeJS.ErrnoException).code = 'ERR_DLOPEN_FAILED';
  return err;
}

const NODE22 = { version: 'v22.23.3', abi: '127' };

t.test('the ABI table maps the NODE_MODULE_VERSIONs of Node.js 18 to 25', async (t) => {
  t.same(
    Object.fromEntries([108, 115, 127, 131, 137].map((abi) => [abi, NODE_BY_ABI[abi]])),
    { 108: '18', 115: '20', 127: '22', 131: '23', 137: '24' },
  );
  t.equal(NODE_BY_ABI[Number(process.versions.modules)], process.versions.node.split('.')[0], 'this Node.js is in the table');
  t.equal(describeAbi(115), 'Node.js 20 (NODE_MODULE_VERSION 115)');
  t.equal(describeAbi(999), 'a Node.js with NODE_MODULE_VERSION 999');
});

t.test("Node's mismatch error: both Node.js versions, the fix, no path", async (t) => {
  t.same(parseAbiMismatch(dlopenMismatch()), { built: 115, required: 127 });
  const message = nativeAddonMessage('better-sqlite3', 'the knowledge base', dlopenMismatch(), NODE22)!;
  t.equal(
    message,
    'better-sqlite3 (needed by the knowledge base) was built for Node.js 20 (NODE_MODULE_VERSION 115), but the server runs on Node.js v22.23.3 (NODE_MODULE_VERSION 127). ' +
      "Fix: run `npm rebuild` in the server's folder with the Node.js that starts the server (v22.23.3 here), or start the server with Node.js 20.",
  );
  t.notMatch(message, /\/home\/me|node_modules/, 'no file path reaches the message');
  const err = nativeAddonError('better-sqlite3', 'the knowledge base', dlopenMismatch(), NODE22)!;
  t.equal(err.code, 'NATIVE_ADDON_MISMATCH');
  t.equal(err.status, ERROR_STATUS.NATIVE_ADDON_MISMATCH);
  t.equal(err.status, 503);
  t.ok(err.cause instanceof Error, 'the original error is kept as the cause (logs)');
});

t.test('an ABI the table does not know: the number, and no "start with" advice', async (t) => {
  const message = nativeAddonMessage('better-sqlite3', 'the knowledge base', dlopenMismatch(999, 127), NODE22)!;
  t.match(message, /built for a Node\.js with NODE_MODULE_VERSION 999, but the server runs on Node\.js v22\.23\.3/);
  t.match(message, /`npm rebuild`/);
  t.notMatch(message, /or start the server with/);
});

t.test('other load failures of a binary get the same fix; unrelated errors are left alone', async (t) => {
  const elf = Object.assign(new Error("/srv/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node: invalid ELF header"), { code: 'ERR_DLOPEN_FAILED' });
  const m1 = nativeAddonMessage('better-sqlite3', 'the knowledge base', elf, NODE22)!;
  t.match(m1, /cannot be loaded by Node\.js v22\.23\.3 \(NODE_MODULE_VERSION 127\): .*<path>: invalid ELF header\. Fix: run `npm rebuild`/);
  t.notMatch(m1, /\/srv\/app/, 'no path');
  const unbuilt = new Error('Could not locate the bindings file. Tried:\n → /srv/app/node_modules/better-sqlite3/build/better_sqlite3.node');
  t.match(nativeAddonMessage('better-sqlite3', 'the knowledge base', unbuilt, NODE22), /Could not locate the bindings file\. Tried:\. Fix: run `npm rebuild`/);
  t.equal(nativeAddonMessage('better-sqlite3', 'the knowledge base', Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }), NODE22), null);
  t.equal(nativeAddonError('better-sqlite3', 'the knowledge base', 'disk full'), null);
});

t.test('a second load attempt in the process ("did not self-register") keeps the first, precise text', async (t) => {
  const first = nativeAddonError('better-sqlite3', 'the knowledge base', dlopenMismatch(115, 127), NODE22)!;
  const again = Object.assign(new Error("Module did not self-register: '/srv/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node'."), { code: 'ERR_DLOPEN_FAILED' });
  t.equal(nativeAddonError('better-sqlite3', 'the knowledge base', again, NODE22)!.message, first.message);
  t.match(nativeAddonMessage('better-sqlite3', 'the knowledge base', again, NODE22), /: Module did not self-register: '<path>'\. Fix: run `npm rebuild`/, 'on its own: the generic text');
});

t.test('the start-up probe: nothing to report when the addons fit; a mismatch is reported, not thrown', async (t) => {
  t.same(probeNativeAddons(), [], 'the installed better-sqlite3 fits this Node.js');
  const failing = ((id: string) => {
    if (id === 'better-sqlite3') return class { constructor() { throw dlopenMismatch(115, Number(process.versions.modules) + 1); } };
    throw new Error(`unexpected ${id}`);
  }) as unknown as NodeJS.Require;
  const problems = probeNativeAddons(failing);
  t.equal(problems.length, 1);
  t.equal(problems[0]!.code, 'NATIVE_ADDON_MISMATCH');
  t.match(problems[0]!.message, new RegExp(`runs on Node\\.js ${process.version.replace(/\./g, '\\.')}`));
});

t.test('the knowledge base when better-sqlite3 does not fit: every surface says NATIVE_ADDON_MISMATCH, documents still work', async (t) => {
  const config = testConfig(t);
  const services = createServices(config, {
    startModels: false,
    log: pino({ level: 'silent' }),
    openKbStore: (dir) => new KbStore(dir, { openDatabase: () => { throw dlopenMismatch(115, 127); } }),
  });
  t.teardown(() => services.close());
  const app = await buildTestApp(t, { config, services });

  const list = await app.inject({ method: 'GET', url: '/v1/collections' });
  t.equal(list.statusCode, 503);
  t.equal(list.json().code, 'NATIVE_ADDON_MISMATCH');
  t.match(list.json().error, /better-sqlite3 \(needed by the knowledge base\) was built for Node\.js 20 \(NODE_MODULE_VERSION 115\), but the server runs on Node\.js v\S+ \(NODE_MODULE_VERSION \d+\)\. Fix: run `npm rebuild`/);

  const health = await app.inject('/health');
  t.equal(health.statusCode, 200, 'still ready: the per-document tools work');
  t.equal(health.json().checks.kb_storage, 'degraded');
  t.match(health.json().reason, /npm rebuild/, '/health says why and how to fix it');

  const system = (await app.inject('/v1/system/health')).json();
  t.equal(system.status, 'degraded');
  t.equal(system.features.knowledge_base.available, false);
  t.match(system.features.knowledge_base.reason, /NODE_MODULE_VERSION 115/);

  const lang = await app.inject({ method: 'POST', url: '/v1/language/detect', payload: { text: 'Ceci est une phrase en français, assez longue pour la détection.' } });
  t.equal(lang.statusCode, 200, 'a per-document tool still answers');
});

/** The installed runtime addon binaries (.node files) of package.json's dependencies and their platform packages. */
function runtimeAddonBinaries(): Array<{ pkg: string; file: string }> {
  const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const packages = new Set<string>();
  for (const name of Object.keys(pkg.dependencies)) {
    const dir = path.join(PROJECT_ROOT, 'node_modules', name);
    if (!existsSync(path.join(dir, 'package.json'))) continue;
    packages.add(name);
    // Prebuilt binaries come as optional platform packages (sharp: @img/sharp-linux-x64, canvas: @napi-rs/canvas-linux-x64-gnu).
    const own = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> };
    for (const opt of Object.keys(own.optionalDependencies ?? {})) if (existsSync(path.join(PROJECT_ROOT, 'node_modules', opt, 'package.json'))) packages.add(opt);
  }
  const out: Array<{ pkg: string; file: string }> = [];
  for (const name of packages) {
    const dir = path.join(PROJECT_ROOT, 'node_modules', name);
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.node') && !entry.parentPath.includes(`${path.sep}node_modules${path.sep}`, dir.length)) {
        out.push({ pkg: name, file: path.join(entry.parentPath, entry.name) });
      }
    }
  }
  return out;
}

t.test('every installed runtime addon is Node-API (any Node.js) or probed at start-up', async (t) => {
  const probed = new Set(ABI_BOUND_ADDONS.map((a) => a.name));
  const binaries = runtimeAddonBinaries();
  t.ok(binaries.some((b) => b.pkg === 'better-sqlite3'), 'better-sqlite3 is found');
  t.ok(binaries.some((b) => b.pkg === 'hnswlib-node'), 'hnswlib-node is found');
  for (const { pkg, file } of binaries) {
    const bytes = readFileSync(file);
    // V8-ABI addons export node_register_module_v<ABI>; Node-API ones napi_register_module_v1.
    const abi = /node_register_module_v(\d+)/.exec(bytes.toString('latin1'))?.[1];
    const rel = path.relative(PROJECT_ROOT, file);
    if (abi !== undefined) {
      t.ok(probed.has(pkg), `${rel} is bound to NODE_MODULE_VERSION ${abi}: ${pkg} must be in ABI_BOUND_ADDONS`);
      t.equal(abi, process.versions.modules, `${rel} was built for this Node.js`);
    } else if (bytes.includes('napi_register_module_v1')) {
      t.pass(`${rel}: Node-API`);
    }
  }
});
