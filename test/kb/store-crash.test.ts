/**
 * kill -9 at random moments while a child process replaces documents' chunk sets, round after
 * round on the same database: after each kill the reopened store (integrity check included) holds
 * every document at exactly one whole revision, old or new (its chunk count, texts, ords, vectors
 * and hash all of that revision), at least the last one the child saw committed, no orphan rows,
 * and a collection version equal to the number of commits.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { KbStore } from '../../src/kb/kb-store.ts';
import { KB_DB_FILE } from '../../src/kb/db.ts';
import { makeVectors, tempDir } from './fixtures/store-data.ts';
import { chunkCountOf, DIM, shaOf, SOURCES } from './fixtures/store-replace-loop.ts';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';

const SCRIPT = path.join(import.meta.dirname, 'fixtures', 'store-replace-loop.ts');
const ROUNDS = 8;

t.test('a store killed mid-replace always reopens with whole versions', async (t) => {
  const dir = path.join(tempDir(t), 'kb');
  let seed = 4242;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 1000) / 1000;
  let killedMidWrite = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const child = spawn(process.execPath, [...SOURCE_LOADER_ARGS, SCRIPT, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('committed')) resolve();
      });
      child.on('exit', () => reject(new Error(`replace loop exited early: ${err}`)));
    });
    await new Promise((r) => setTimeout(r, Math.floor(random() * 600)));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    // The last revision of each source the child saw committed must have survived.
    const seen = new Map<string, number>();
    for (const m of out.matchAll(/committed (\S+) (\d+)\n/g)) seen.set(m[1]!, Number(m[2]));

    const store = new KbStore(dir);
    t.ok(store.integrityChecked, `round ${round}: the unclean shutdown made the open run quick_check (and it passed)`);
    const c = store.getCollection('crash')!;
    t.ok(c, `round ${round}: the collection is there`);
    const docs = store.listDocuments(c.id, { limit: 500 }).items;
    t.equal(docs.length, SOURCES.length, `round ${round}: three documents`);
    let revisions = 0;
    let chunks = 0;
    for (const d of docs) {
      revisions += d.revision;
      chunks += d.chunk_count;
      t.ok(d.revision >= (seen.get(d.source) ?? 0), `round ${round}: ${d.source} at revision ${d.revision}, committed ${seen.get(d.source) ?? 0} or later`);
      if (d.revision === 0) {
        t.equal(d.chunk_count, 0);
        t.same(store.documentChunks(d.id), []);
        continue;
      }
      const rows = store.documentChunks(d.id);
      const ok =
        d.status === 'ready' &&
        d.content_sha256 === shaOf(d.source, d.revision) &&
        d.chunk_count === chunkCountOf(d.revision) &&
        rows.length === d.chunk_count &&
        rows.every((r, i) => r.ord === i && r.text.startsWith(`rev${d.revision} chunk ${i} `));
      t.ok(ok, `round ${round}: ${d.source} holds revision ${d.revision} whole (${rows.length} chunks)`);
      const first = store.getChunks([rows[0]!.id]);
      t.ok(first.length === 1);
    }
    t.equal(c.version, revisions, `round ${round}: collection version ${c.version} = commits`);
    let vectors = 0;
    const firstVectorOf = new Map<string, Float32Array>();
    const docOfChunk = new Map<number, string>();
    for (const ch of store.iterateChunks(c.id)) if (ch.ord === 0) docOfChunk.set(ch.id, ch.document_id);
    for (const v of store.iterateVectors(c.id)) {
      vectors++;
      const docId = docOfChunk.get(v.id);
      if (docId) firstVectorOf.set(docId, v.vector);
    }
    t.equal(vectors, chunks, `round ${round}: one vector per chunk`);
    for (const d of docs.filter((x) => x.revision > 0)) {
      t.same(Array.from(firstVectorOf.get(d.id) ?? []), Array.from(makeVectors(1, DIM, d.revision)[0]!), `round ${round}: ${d.source} vectors of its revision`);
    }
    store.close();

    const raw = new Database(path.join(dir, KB_DB_FILE), { readonly: true });
    t.equal(raw.prepare('SELECT COUNT(*) FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)').pluck().get(), 0, `round ${round}: no orphan chunks`);
    t.equal(raw.prepare('SELECT COUNT(*) FROM chunk_vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)').pluck().get(), 0, `round ${round}: no orphan vectors`);
    t.equal(raw.prepare('SELECT COUNT(*) FROM chunks').pluck().get(), chunks, `round ${round}: chunk rows = chunk_count sum`);
    t.same(raw.pragma('foreign_key_check'), []);
    // A last line "begin" means the kill came while a replacement was being written.
    if (/begin \S+ \d+\n$/.test(out)) killedMidWrite++;
    raw.close();
  }
  t.ok(killedMidWrite > 0, `${killedMidWrite} of ${ROUNDS} kills came in the middle of a replacement`);
});
