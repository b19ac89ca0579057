/**
 * Opening the store: WAL and foreign keys on, migrations applied once and idempotent on reopen, a
 * file from a newer schema refused, quick_check after an unclean shutdown (or when asked), and every unusable place a coded STORAGE_UNAVAILABLE without
 * a path: a folder that cannot be created, a file that is not a database, a corrupt database.
 */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { KbStore } from '../../src/kb/kb-store.ts';
import { KB_DB_FILE, openKbDatabase } from '../../src/kb/db.ts';
import { migrate, MIGRATIONS, SCHEMA_VERSION, schemaVersion, type Migration } from '../../src/kb/migrations.ts';
import { makeChunks, tempDir, versionOf } from './fixtures/store-data.ts';

t.test('pragmas, migrations once, reopen keeps data', async (t) => {
  const dir = path.join(tempDir(t), 'kb');
  const db = openKbDatabase(dir);
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  t.equal(db.pragma('synchronous', { simple: true }), 1, 'NORMAL');
  t.equal(db.pragma('foreign_keys', { simple: true }), 1);
  t.ok(Number(db.pragma('busy_timeout', { simple: true })) > 0);
  t.same(migrate(db), { from: 0, to: SCHEMA_VERSION });
  t.same(migrate(db), { from: SCHEMA_VERSION, to: SCHEMA_VERSION }, 'idempotent');
  t.equal(schemaVersion(db), SCHEMA_VERSION);
  db.close();

  const store = new KbStore(dir);
  const c = store.createCollection('keep', null);
  const d = store.ensureDocument(c.id, { source: 's', source_kind: 'upload', source_key: 'upload:s', filename: 's.txt' });
  store.replaceDocument(c.id, d.id, versionOf('s', 'a'.repeat(64), { source_kind: 'upload', source_key: 'upload:s' }), makeChunks(3, 'v1'));
  store.close();
  store.close(); // idempotent
  t.throws(() => store.getCollection('keep'), { code: 'STORAGE_UNAVAILABLE' }, 'a closed store says so');
  for (let i = 0; i < 2; i++) {
    const again = new KbStore(dir);
    t.equal(again.integrityChecked, false, 'a cleanly closed file is not checked again');
    t.match(again.getCollection('keep'), { version: 1 });
    t.equal(again.documentChunks(d.id).length, 3);
    again.close();
  }
});

t.test('a later migration runs once, in a transaction; a failing one leaves the previous version', async (t) => {
  const dir = path.join(tempDir(t), 'kb');
  const db = openKbDatabase(dir);
  t.teardown(() => db.close());
  migrate(db);
  let runs = 0;
  const next: Migration = {
    version: SCHEMA_VERSION + 1,
    name: 'add a column',
    up: (d) => {
      runs++;
      d.exec('ALTER TABLE collections ADD COLUMN note TEXT');
    },
  };
  const broken: Migration = {
    version: SCHEMA_VERSION + 2,
    name: 'broken',
    up: (d) => {
      d.exec('CREATE TABLE half_done (x INTEGER)');
      throw new Error('boom');
    },
  };
  t.throws(() => migrate(db, [...MIGRATIONS, next, broken]), /boom/);
  t.equal(schemaVersion(db), SCHEMA_VERSION + 1, 'stopped after the good one');
  t.equal(db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'half_done'").pluck().get(), 0, 'the broken one rolled back');
  migrate(db, [...MIGRATIONS, next]);
  t.equal(runs, 1, 'not run again');
});

t.test('a database from a newer server is refused with a clear message', async (t) => {
  const dir = path.join(tempDir(t), 'kb');
  new KbStore(dir).close();
  const raw = new Database(path.join(dir, KB_DB_FILE));
  raw.pragma(`user_version = ${SCHEMA_VERSION + 5}`);
  raw.close();
  t.throws(() => new KbStore(dir), { code: 'STORAGE_UNAVAILABLE', message: new RegExp(`schema version ${SCHEMA_VERSION + 5}, newer than this server understands \\(${SCHEMA_VERSION}\\)`) });
});

t.test('unusable places are STORAGE_UNAVAILABLE without the path', async (t) => {
  const base = tempDir(t);
  const blocker = path.join(base, 'a-file');
  fs.writeFileSync(blocker, 'x');
  const e1 = t.throws(() => new KbStore(path.join(blocker, 'kb')), { code: 'STORAGE_UNAVAILABLE', message: /folder cannot be created or written/ }) as Error;
  t.notOk(e1.message.includes(base), 'no path in the message');

  const notDb = path.join(base, 'notdb');
  fs.mkdirSync(notDb);
  fs.writeFileSync(path.join(notDb, KB_DB_FILE), Buffer.alloc(8192, 'garbage!'));
  const e2 = t.throws(() => new KbStore(notDb), { code: 'STORAGE_UNAVAILABLE', message: /not an SQLite database/ }) as Error;
  t.notOk(e2.message.includes(base));
});

t.test('a corrupted page fails the integrity check on open', async (t) => {
  const dir = path.join(tempDir(t), 'kb');
  const store = new KbStore(dir);
  const c = store.createCollection('big', null);
  for (let i = 0; i < 20; i++) {
    const d = store.ensureDocument(c.id, { source: `s${i}`, source_kind: 'url', source_key: `s${i}`, filename: null });
    store.replaceDocument(c.id, d.id, versionOf(`s${i}`, 'a'.repeat(64)), makeChunks(50, `v${i}`, { textBytes: 400 }));
  }
  store.close(); // checkpoints the WAL into the main file
  const file = path.join(dir, KB_DB_FILE);
  const size = fs.statSync(file).size;
  t.ok(size > 200_000, `file of ${size} bytes`);
  // Overwrite pages in the second half (chunk table b-tree pages) with garbage, keeping the header.
  const fd = fs.openSync(file, 'r+');
  const junk = Buffer.alloc(4096 * 8);
  for (let i = 0; i < junk.length; i++) junk[i] = (i * 131 + 7) & 0xff;
  fs.writeSync(fd, junk, 0, junk.length, Math.floor(size / 2 / 4096) * 4096);
  fs.closeSync(fd);
  t.throws(() => new KbStore(dir, { integrityCheck: 'quick' }), { code: 'STORAGE_UNAVAILABLE', message: /integrity check|corrupt/ });
  // After an unclean shutdown (the mark left at 'running') the default open checks too.
  const raw = new Database(file);
  raw.prepare("UPDATE meta SET value = 'running' WHERE key = 'shutdown'").run();
  raw.close();
  t.throws(() => new KbStore(dir), { code: 'STORAGE_UNAVAILABLE', message: /integrity check|corrupt/ });
  const unchecked = new KbStore(dir, { integrityCheck: 'none' });
  t.equal(unchecked.integrityChecked, false);
  unchecked.close();
  t.pass('integrityCheck: none opens it anyway (for salvage tools)');
});
