/**
 * An empty database file where collections existed is refused (issue 19, item 5). The knowledge
 * base writes `kb.sqlite.marker` next to its database when its first collection is created; with
 * the marker there, a kb.sqlite of 0 bytes (or one with no tables) is STORAGE_UNAVAILABLE with
 * how to recover, and /health says the knowledge base storage is degraded, instead of an empty
 * knowledge base silently taking its place. A fresh DATA_DIR still starts empty, and so does a
 * database file moved away on purpose. A file that is not a database at all degrades /health too.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { KB_MARKER_FILE } from '../../src/kb/db.ts';
import { KbStore } from '../../src/kb/kb-store.ts';
import { createServices } from '../../src/services.ts';
import { buildTestApp, tempDir, testConfig } from '../helper.ts';

/** A data dir whose knowledge base had one collection, closed cleanly. */
function withCollection(t: Test): { dataDir: string; dir: string; db: string } {
  const dataDir = tempDir(t);
  const dir = path.join(dataDir, 'kb');
  const store = new KbStore(dir);
  store.createCollection('notes', null);
  store.close();
  return { dataDir, dir, db: path.join(dir, 'kb.sqlite') };
}

async function appOn(t: Test, dataDir: string) {
  const config = testConfig(t, { DATA_DIR: dataDir });
  const services = createServices(config, { startModels: false, inlineExtraction: true, log: pino({ level: 'silent' }) });
  t.teardown(() => services.close());
  return buildTestApp(t, { config, services });
}

t.test('a 0-byte kb.sqlite after collections existed: refused with a coded error, /health degraded', async (t) => {
  const { dataDir, dir, db } = withCollection(t);
  t.ok(fs.existsSync(path.join(dir, KB_MARKER_FILE)), 'the first collection wrote the marker');
  fs.truncateSync(db, 0);
  t.throws(() => new KbStore(dir), { code: 'STORAGE_UNAVAILABLE', message: /database file is empty \(0 bytes\).*restore .*backup/ });
  t.equal(fs.statSync(db).size, 0, 'the refused file is left as it was (no new header written into it)');

  const app = await appOn(t, dataDir);
  const health = await app.inject('/health');
  t.equal(health.statusCode, 200, 'per-document tools still work: ready, degraded');
  t.equal(health.json().status, 'degraded');
  t.equal(health.json().checks.kb_storage, 'degraded');
  t.match(health.json().reason, /kb: .*empty \(0 bytes\)/);
  t.notMatch(health.json().reason, dataDir, 'never the path');
  const list = await app.inject('/v1/collections');
  t.equal(list.statusCode, 503);
  t.equal(list.json().code, 'STORAGE_UNAVAILABLE');
  t.match(list.json().error, /empty/);
  t.equal(fs.statSync(db).size, 0, 'still 0 bytes: nothing was created in its place');
});

t.test('a valid but empty SQLite file (no tables) where collections existed: refused too', async (t) => {
  const { dir, db } = withCollection(t);
  fs.rmSync(db);
  // A database file with a header but no tables (an empty database replacing the real one).
  const empty = new Database(db);
  empty.exec('CREATE TABLE t (a); DROP TABLE t');
  empty.close();
  t.ok(fs.statSync(db).size > 0);
  t.throws(() => new KbStore(dir), { code: 'STORAGE_UNAVAILABLE', message: /empty \(no tables\)/ });
});

t.test('a fresh data dir, and a database moved away on purpose, still start empty', async (t) => {
  const fresh = await appOn(t, tempDir(t));
  const h = (await fresh.inject('/health')).json();
  t.equal(h.status, 'ok');
  t.equal(h.checks.kb_storage, 'ok');
  t.same((await fresh.inject('/v1/collections')).json().collections, [], 'no collections, no error');

  const { dir, db } = withCollection(t);
  fs.rmSync(db);
  const store = new KbStore(dir);
  t.same(store.listCollections(), [], 'a missing file is a deliberate move: a new, empty knowledge base');
  store.close();
});

t.test('a knowledge base from before the marker gets it at its next open', async (t) => {
  const { dir } = withCollection(t);
  fs.rmSync(path.join(dir, KB_MARKER_FILE));
  new KbStore(dir).close();
  t.ok(fs.existsSync(path.join(dir, KB_MARKER_FILE)));
});

t.test('kb.sqlite that is not a database: /health degraded, naming the condition', async (t) => {
  const dataDir = tempDir(t);
  fs.mkdirSync(path.join(dataDir, 'kb'));
  fs.writeFileSync(path.join(dataDir, 'kb', 'kb.sqlite'), Buffer.alloc(8192, 7));
  const app = await appOn(t, dataDir);
  const health = (await app.inject('/health')).json();
  t.equal(health.status, 'degraded');
  t.match(health.reason, /kb: .*not an SQLite database/);
  const sys = (await app.inject('/v1/system/health')).json();
  t.equal(sys.status, 'degraded');
  t.equal(sys.features.knowledge_base.available, false);
});
