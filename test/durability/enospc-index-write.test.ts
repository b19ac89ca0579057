/**
 * A disk that fills up (ENOSPC) or turns read-only (EROFS) in the middle of an index write: the
 * call is still answered (the index stays in memory), no temp folder is left, /health turns 503,
 * and where an operation truly needs the disk it fails with a coded error that carries no path.
 * Faults are injected into the real fs module the store writes through.
 */
import t from 'tap';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { buildAppOn, post, startStaticServer, type StaticServer } from '../integration/helpers.ts';
import { tempDir } from '../helper.ts';
import { describeFsError, diskCondition, redactPaths, storageError } from '../../src/util/fs-errors.ts';
import { errorText } from '../../src/util/error-text.ts';

let srv: StaticServer;
t.before(async () => {
  srv = await startStaticServer(t);
});

const TEXT = Array.from({ length: 300 }, (_, i) =>
  i === 123 ? 'The basalt aqueduct was repaired in spring.' : `Line ${i} is about the weather in district ${i % 9}.`,
).join('\n\n');

type Patch = { restore(): void };

/** Makes fs.promises[name] throw `code` (with the path in its message, as Node does) for files under `dir`. */
function failUnder(name: 'open' | 'rm' | 'rename', dir: string, code: string): Patch {
  const original = fsp[name] as (...args: unknown[]) => Promise<unknown>;
  (fsp as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
    const target = String(args[0]);
    if (target.startsWith(dir)) throw Object.assign(new Error(`${code}: simulated, ${name} '${target}'`), { code, syscall: name, path: target });
    return original.apply(fsp, args);
  };
  return { restore: () => ((fsp as unknown as Record<string, unknown>)[name] = original) };
}

t.test('ENOSPC while the index is written: answered from memory, nothing left, /health 503, no path', async (t) => {
  const dataDir = tempDir(t);
  const app = await buildAppOn(t, dataDir);
  await app.services.swept;
  const indexes = path.join(dataDir, 'indexes');
  const url = srv.add('aqueduct.txt', Buffer.from(TEXT), 'text/plain');
  const before = await app.inject({ method: 'GET', url: '/health' });
  t.equal(before.statusCode, 200, 'ready before');

  const patch = failUnder('open', indexes, 'ENOSPC');
  t.teardown(() => patch.restore());
  const res = await post(app, '/v1/documents/retrieve', { document_url: url, query: 'basalt aqueduct repaired', top_k: 1 });
  patch.restore();
  t.equal(res.status, 200, 'the call is answered');
  t.match(res.body.results[0].text, /basalt aqueduct was repaired/);
  t.notOk(JSON.stringify(res.body).includes(dataDir), 'no internal path in the answer');
  t.same(fs.readdirSync(indexes), [], 'the half-written temp folder was removed');

  const health = await app.inject({ method: 'GET', url: '/health' });
  t.equal(health.statusCode, 503, 'the failed write turns readiness off at once');
  t.match(health.json(), { ready: false, reason: /^disk: full \(\d+ MB free, need 100\)$/, checks: { disk: 'full' } });
  const again = await post(app, '/v1/documents/retrieve', { document_url: url, query: 'basalt aqueduct repaired', top_k: 1 });
  t.equal(again.body.retrieval.documents[0].index, 'memory', 'later calls use the memory index');
});

t.test('EROFS while clearing the stored indexes: 503 STORAGE_UNAVAILABLE naming DATA_DIR, not a path', async (t) => {
  const dataDir = tempDir(t);
  const app = await buildAppOn(t, dataDir);
  const url = srv.add('aqueduct-2.txt', Buffer.from(TEXT), 'text/plain');
  t.equal((await post(app, '/v1/documents/retrieve', { document_url: url, query: 'basalt', top_k: 1 })).status, 200);
  t.equal(fs.readdirSync(path.join(dataDir, 'indexes')).length, 1, 'an index was persisted');
  const patches = [failUnder('rename', path.join(dataDir, 'indexes'), 'EROFS'), failUnder('rm', path.join(dataDir, 'indexes'), 'EROFS')];
  t.teardown(() => patches.forEach((p) => p.restore()));
  const res = await post(app, '/v1/cache', { action: 'clear' });
  patches.forEach((p) => p.restore());
  t.equal(res.status, 503);
  t.match(res.body, { code: 'STORAGE_UNAVAILABLE', error: 'Could not clear the stored indexes: the data folder is on a read-only file system (DATA_DIR)' });
  t.notOk(JSON.stringify(res.body).includes(dataDir));
});

t.test('fs errors are mapped to conditions and described without paths', async (t) => {
  const err = (code: string) => Object.assign(new Error(`${code}: x, open '/srv/data/indexes/.tmp-p1-k-0123456789ab/chunks.json'`), { code });
  t.equal(diskCondition(err('ENOSPC')), 'full');
  t.equal(diskCondition(err('EDQUOT')), 'full');
  t.equal(diskCondition(err('EROFS')), 'read-only');
  t.equal(diskCondition(err('EACCES')), 'permission-denied');
  t.equal(diskCondition(err('ENOENT')), null);
  t.equal(diskCondition(new Error('plain')), null);
  t.equal(diskCondition(storageError('Saving', err('ENOSPC'))), 'full', 'seen through a wrapping error');
  for (const code of ['ENOSPC', 'EROFS', 'EACCES', 'ENOENT', 'EIO']) {
    const text = describeFsError(err(code));
    t.notOk(text.includes('/srv'), `${code}: "${text}"`);
  }
  const coded = storageError('Could not save the index', err('ENOSPC'));
  t.match(coded, { code: 'STORAGE_UNAVAILABLE', status: 503, message: 'Could not save the index: no space left on the data disk (DATA_DIR)' });
  t.equal(errorText(err('EIO')), "EIO: x, open '<path>'", 'errorText redacts paths for every error text');
  t.equal(redactPaths('see https://example.com/a/b and /var/lib/x.db, 3/4'), 'see https://example.com/a/b and <path>, 3/4', 'URLs and ratios stay');
  t.equal(redactPaths('in /srv/models/Xenova/m', [['MODELS_DIR', '/srv/models']]), 'in MODELS_DIR/Xenova/m', 'named folders become their setting');
});
