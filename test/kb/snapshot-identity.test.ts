/**
 * The reproduction of "a stale snapshot gives empty answers", through the real knowledge
 * base: a collection of 51 notes is ingested and its index snapshot saved; kb.sqlite is moved away
 * (as the integrity-check message advises) but DATA_DIR/kb/indexes/ stays; 51 other notes go into a
 * new collection, which the new database gives id 1 and version 51 again, with chunk ids from 1.
 * The old snapshot must not be "loaded and caught up": it belongs to another database, so the
 * indexes are rebuilt from SQLite, every search finds the new notes and none of the old, and the
 * snapshot saved then is this database's (loaded as is at the next start).
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import pino from 'pino';
import { createServices, type Services } from '../../src/services.ts';
import { testConfig, tempDir } from '../helper.ts';

const NOTES = 51;

/** A distinct alphabetic word per note (the tokenizer keeps letters whole). */
function word(prefix: string, i: number): string {
  let s = '';
  for (let n = i + 26; n > 0; n = Math.floor(n / 26)) s = String.fromCharCode(97 + (n % 26)) + s;
  return `${prefix}${s}q`; // the q ending keeps stemming (a final y becomes i) from merging two words
}

function writeNotes(dir: string, prefix: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < NOTES; i++) {
    const w = word(prefix, i);
    fs.writeFileSync(path.join(dir, `note-${i}.txt`), `Note ${i}\n\nThis note is about ${w}. The ${w} is described here, and ${w} again.\n`);
  }
}

/** A started knowledge base; `events` collects its log lines (JSON) of kb.index_* events. */
function start(t: Test, dataDir: string, notesDir: string, events: Array<Record<string, unknown>> = []): Services {
  const config = testConfig(t, { DATA_DIR: dataDir, ALLOWED_DIRS: notesDir });
  const log = pino({ level: 'info' }, { write: (line: string) => void (line.includes('"kb.index_') && events.push(JSON.parse(line) as Record<string, unknown>)) });
  const services = createServices(config, { startModels: false, inlineExtraction: true, log });
  t.teardown(() => services.close());
  return services;
}

const search = (s: Services, query: string) => s.kb.search('notes', { query, top_k: 5 }, { signal: AbortSignal.timeout(60_000) });

async function ingest(t: Test, s: Services, dir: string): Promise<void> {
  const job = await s.kb.addDocuments('notes', { paths: [dir], create: true });
  const ended = await s.kb.waitForJob(job.id, 120_000);
  t.equal(ended.status, 'succeeded');
  t.equal(ended.counts.done, NOTES, `${NOTES} notes ingested`);
}

t.test('kb.sqlite moved away, indexes/ kept: the old snapshot is rebuilt, not caught up; searches find the new notes', async (t) => {
  const root = tempDir(t, 'kb-snapshot-identity-');
  const dataDir = path.join(root, 'data');
  const oldNotes = path.join(root, 'old');
  const newNotes = path.join(root, 'new');
  writeNotes(oldNotes, 'oldword');
  writeNotes(newNotes, 'newword');
  const manifest = path.join(dataDir, 'kb', 'indexes', '1', 'manifest.json');

  const first = start(t, dataDir, root);
  await ingest(t, first, oldNotes);
  t.equal(first.kb.getCollection('notes').id, 1);
  t.equal((await search(first, word('oldword', 7))).results.length, 1, 'the old notes are searchable');
  await first.close();
  const oldSnapshot = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: number; collection_id: number; database_id: string };
  t.match(oldSnapshot, { collection_id: 1, version: NOTES, database_id: /^[0-9a-f]{32}$/ }, 'the old snapshot was saved with its database id');

  for (const f of fs.readdirSync(path.join(dataDir, 'kb'))) if (f.startsWith('kb.sqlite')) fs.rmSync(path.join(dataDir, 'kb', f));

  const events: Array<Record<string, unknown>> = [];
  const second = start(t, dataDir, root, events);
  await ingest(t, second, newNotes);
  const c = second.kb.getCollection('notes');
  t.equal(c.id, 1, 'the new database gives the new collection id 1 again');
  t.equal(c.version, NOTES, 'and the same version as the old snapshot');
  for (const i of [0, 7, 25, 50]) {
    const res = await search(second, word('newword', i));
    t.equal(res.results.length, 1, `note ${i} of the new notes is found`);
    t.match(res.results[0]?.text, word('newword', i));
    t.not(res.confidence, 'none');
  }
  t.equal((await search(second, word('oldword', 7))).results.length, 0, 'nothing of the old database answers');
  const rebuilds = events.filter((e) => e.event === 'kb.index_rebuild');
  t.equal(rebuilds.length, 1, 'the indexes were rebuilt once');
  t.match(rebuilds[0]?.reason, /another database/, 'because the snapshot belongs to another database');
  // The rebuilt index (opened by the first commit, index-registry.ts) catches up the commits made while it opened; the old snapshot is never loaded.
  t.equal(events.filter((e) => e.event === 'kb.index_loaded').length, 0, 'the old snapshot was neither loaded nor caught up');
  await second.close();
  const newSnapshot = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: number; database_id: string };
  t.not(newSnapshot.database_id, oldSnapshot.database_id, "the snapshot saved now is the new database's");

  const later: Array<Record<string, unknown>> = [];
  const third = start(t, dataDir, root, later);
  t.equal((await search(third, word('newword', 33))).results.length, 1, 'after a restart its own snapshot serves');
  t.equal(later.filter((e) => e.event === 'kb.index_loaded').length, 1, 'loaded from it');
  t.equal(later.filter((e) => e.event === 'kb.index_rebuild').length, 0, 'no rebuild');
});
