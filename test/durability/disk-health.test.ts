/**
 * DATA_DIR that takes no writes: /health answers 503 with the reason, get_system_health shows it,
 * and the tools keep working (indexes held in memory). The file-system layer of the probe is
 * injected (tests run as root, where chmod does not stop writes); the real probe is tested on a
 * writable folder.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, tempDir } from '../helper.ts';
import { post, startStaticServer, type StaticServer } from '../integration/helpers.ts';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';
import { DiskHealth, STALE_FACTOR, realDiskProbe, type DiskProbe } from '../../src/util/disk-health.ts';

const MB = 1024 * 1024;
const TEXT = Array.from({ length: 400 }, (_, i) =>
  i === 217 ? 'The zirconium flange tolerance is four microns.' : `Paragraph ${i} talks about ordinary matters of section ${i % 13}.`,
).join('\n\n');

let srv: StaticServer;
t.before(async () => {
  srv = await startStaticServer(t);
});

function fsError(code: string, syscall: string, file: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: failure, ${syscall} '${file}'`), { code, syscall, path: file });
}

async function appWithProbe(t: Test, probe: DiskProbe, env: Record<string, string> = {}) {
  const dataDir = tempDir(t);
  const config = loadConfig({ DATA_DIR: dataDir, RATE_LIMIT_RPM: '100000', ALLOW_PRIVATE_NETWORKS: 'true', ...env });
  const services = createServices(config, { diskProbe: probe, startModels: false });
  t.teardown(() => services.close());
  const app = await buildTestApp(t, { config, services });
  return { app, dataDir };
}

async function toolsStillWork(t: Test, app: FastifyInstance, dataDir: string) {
  const lang = await post(app, '/v1/language/detect', { text: 'Ceci est une phrase écrite en français, assez longue pour être reconnue.' });
  t.equal(lang.status, 200, 'detect_language needs no disk');
  t.equal(lang.body.language_code, 'fr');
  const url = srv.add(`doc-${Math.random().toString(36).slice(2)}.txt`, Buffer.from(TEXT), 'text/plain');
  for (const round of ['built', 'memory']) {
    const res = await post(app, '/v1/documents/retrieve', { document_url: url, query: 'zirconium flange tolerance', top_k: 2 });
    t.equal(res.status, 200, `retrieve_chunks answers (${round})`);
    t.match(res.body.results[0].text, /zirconium flange tolerance/);
    t.equal(res.body.retrieval.documents[0].index, round);
    t.notOk(JSON.stringify(res.body).includes(dataDir), 'no internal path in the answer', { body: JSON.stringify(res.body).slice(0, 3000) });
  }
  const entries = fs.existsSync(path.join(dataDir, 'indexes')) ? fs.readdirSync(path.join(dataDir, 'indexes')) : [];
  t.same(entries, [], 'nothing was written (or left) under indexes/');
}

t.test('read-only DATA_DIR: /health 503 "disk: read-only", tools keep working from memory', async (t) => {
  let dataDirSeen = '';
  const { app, dataDir } = await appWithProbe(t, {
    freeBytes: async () => 50_000 * MB,
    writeProbe: async (dir) => {
      dataDirSeen = dir;
      throw fsError('EROFS', 'open', path.join(dir, '.probe-1-abcd'));
    },
  });
  const health = await app.inject({ method: 'GET', url: '/health' });
  t.equal(health.statusCode, 503);
  t.match(health.json(), { status: 'unavailable', ready: false, reason: 'disk: read-only', checks: { data_dir_writable: false, disk: 'read-only', disk_free_mb: 50_000 } });
  t.equal(dataDirSeen, dataDir, 'the probe ran on DATA_DIR');
  t.notOk(health.body.includes(dataDir), 'no path in /health');
  await toolsStillWork(t, app, dataDir);
  const sys = await app.inject({ method: 'GET', url: '/v1/system/health' });
  t.equal(sys.statusCode, 200);
  t.equal(sys.json().status, 'degraded');
  t.match(sys.json().features.disk, { available: false, reason: 'disk: read-only', state: 'read-only', indexes_in_memory_only: 1 });
});

t.test('full DATA_DIR (below MIN_FREE_DISK_MB): /health 503 "disk: full (N MB free, need M)"', async (t) => {
  const { app, dataDir } = await appWithProbe(t, { freeBytes: async () => 12 * MB + 5, writeProbe: async () => undefined }, { MIN_FREE_DISK_MB: '100' });
  const health = await app.inject({ method: 'GET', url: '/health' });
  t.equal(health.statusCode, 503);
  t.match(health.json(), { ready: false, reason: 'disk: full (12 MB free, need 100)', checks: { disk: 'full', disk_free_mb: 12 } });
  await toolsStillWork(t, app, dataDir);
});

t.test('a write that fails with ENOSPC (statfs still looked fine) also reads "full"', async (t) => {
  const { app } = await appWithProbe(t, {
    freeBytes: async () => 500 * MB,
    writeProbe: async (dir) => {
      throw fsError('ENOSPC', 'write', path.join(dir, '.probe'));
    },
  });
  const health = await app.inject({ method: 'GET', url: '/health' });
  t.equal(health.statusCode, 503);
  t.match(health.json(), { reason: 'disk: full (500 MB free, need 100)', checks: { disk: 'full' } });
});

t.test('the real probe on a writable folder: ok, free space measured, nothing left behind', async (t) => {
  const dir = tempDir(t);
  const ok = await new DiskHealth({ dir, minFreeMb: 1 }).check();
  t.match(ok, { state: 'ok', writable: true, min_free_mb: 1 });
  t.ok(ok.free_mb! > 0, `${ok.free_mb} MB free`);
  t.notOk('reason' in ok);
  t.same(fs.readdirSync(dir), [], 'the probe file is removed');
  const full = await new DiskHealth({ dir, minFreeMb: 1_000_000 }).check();
  t.match(full, { state: 'full', writable: false, reason: new RegExp(`^disk: full \\(${ok.free_mb! > 0 ? '\\d+' : ''} MB free, need 1000000\\)$`) });
  const created = await new DiskHealth({ dir: path.join(dir, 'new', 'data'), minFreeMb: 1 }).check();
  t.equal(created.state, 'ok', 'a missing DATA_DIR is created by the probe');
  t.same(fs.readdirSync(path.join(dir, 'new', 'data')), []);
  fs.writeFileSync(path.join(dir, 'a-file'), 'x');
  const blocked = await new DiskHealth({ dir: path.join(dir, 'a-file', 'data'), minFreeMb: 1 }).check();
  t.match(blocked, { state: 'unavailable', writable: false, reason: /^disk: unavailable \(/ });
  t.notOk(blocked.reason!.includes(dir), `no path in "${blocked.reason}"`);
  // And through the app with the real probe: ready.
  const app = await buildTestApp(t);
  const health = await app.inject({ method: 'GET', url: '/health' });
  t.equal(health.statusCode, 200);
  t.match(health.json(), { ready: true, checks: { data_dir_writable: true, disk: 'ok' } });
  t.notOk('reason' in health.json());
});

t.test('results are reused for maxAgeMs; concurrent checks share one probe; recovery is seen', async (t) => {
  let calls = 0;
  let broken = true;
  const probe: DiskProbe = {
    freeBytes: realDiskProbe.freeBytes,
    writeProbe: async () => {
      calls++;
      if (broken) throw fsError('EROFS', 'open', '/x/y');
    },
  };
  const health = new DiskHealth({ dir: tempDir(t), minFreeMb: 0, probe, maxAgeMs: 60_000 });
  const [a, b] = await Promise.all([health.check(), health.check()]);
  t.equal(calls, 1);
  t.equal(a, b);
  t.equal((await health.check()).state, 'read-only');
  t.equal(calls, 1, 'reused');
  broken = false;
  t.equal((await health.check(true)).state, 'ok', 'a forced probe sees the disk back');
  health.reportFailure(fsError('ENOSPC', 'write', '/x/y'));
  t.equal(health.peek()!.state, 'full', 'a failed write elsewhere is taken at once');
  health.reportFailure(new Error('not a disk error'));
  t.equal(health.peek()!.state, 'full', 'other errors change nothing');
});

t.test('a result past maxAgeMs is answered at once while the next probe runs; a much older one waits for it', async (t) => {
  let release: (() => void) | null = null;
  let calls = 0;
  const probe: DiskProbe = {
    freeBytes: realDiskProbe.freeBytes,
    writeProbe: async () => {
      calls++;
      // The first probe answers; later ones hang until released (an fsync behind heavy writes).
      if (calls > 1) await new Promise<void>((r) => (release = r));
    },
  };
  const health = new DiskHealth({ dir: tempDir(t), minFreeMb: 0, probe, maxAgeMs: 40 });
  const first = await health.check();
  t.equal(first.state, 'ok');
  await new Promise((r) => setTimeout(r, 60));
  const stale = await health.check();
  t.equal(stale, first, 'the last result, not a wait on the hanging probe');
  t.equal(calls, 2, 'and a new probe was started');
  t.equal(await health.check(), first, 'later callers too, sharing that one probe');
  t.equal(calls, 2);
  await new Promise((r) => setTimeout(r, 40 * STALE_FACTOR + 20));
  let settled = false;
  const waiting = health.check().then((s) => {
    settled = true;
    return s;
  });
  await new Promise((r) => setTimeout(r, 30));
  t.equal(settled, false, 'a result older than STALE_FACTOR x maxAgeMs is not served: the check waits');
  release!();
  const fresh = await waiting;
  t.equal(fresh.state, 'ok');
  t.not(fresh, first, 'the fresh result');
});

t.test('MIN_FREE_DISK_MB is validated', async (t) => {
  t.equal(loadConfig({ MIN_FREE_DISK_MB: '250' }).MIN_FREE_DISK_MB, 250);
  t.equal(loadConfig({}).MIN_FREE_DISK_MB, 100);
  t.throws(() => loadConfig({ MIN_FREE_DISK_MB: '-1' }), /MIN_FREE_DISK_MB/);
});
