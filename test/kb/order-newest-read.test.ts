/**
 * The issue's reproduction of "an older version wins", for each kind of source: job J1 reads v1
 * (2 MB) and is held before extraction; the source changes to a small v2; job J2 reads v2 and
 * commits; then J1 goes on and commits v1. The rule: for one source in one collection the content
 * read last wins, so the document stays at v2, search finds v2 only, J1's item ends 'skipped' with
 * a 'superseded' note and the document's history says an older read was discarded. The other
 * order (the newer read held, the older committing first) ends at v2 as well.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { JobRecord, KnowledgeBaseApi } from '../../src/kb/types.ts';
import { tempDir } from '../helper.ts';
import { TEXT_DOC } from './jobs-fixtures.ts';
import { bigText, search, sha256, startOrderKb, type OrderFixture } from './order-fixtures.ts';

const V1 = bigText('walrus');
const V2 = TEXT_DOC('pelican');

/** Replaces a file the way editors and deploy tools do: a new file renamed over the old one. */
function replaceAtomically(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

async function ended(kb: KnowledgeBaseApi, job: JobRecord): Promise<JobRecord> {
  return kb.waitForJob(job.id, 120_000);
}

/** What every variant checks at the end: v2 stored and searchable, v1 nowhere, the loser's item superseded. */
async function expectNewest(t: Test, kb: KnowledgeBaseApi, loser: JobRecord, winner: JobRecord) {
  const w = winner.items[0]!;
  const l = loser.items[0]!;
  t.equal(winner.status, 'succeeded', 'the job with the newer read succeeded');
  t.equal(w.stage, 'done', 'and committed');
  t.equal(loser.status, 'succeeded', 'the job with the older read ends too (nothing failed)');
  t.equal(l.stage, 'skipped', "the older read's item is skipped");
  t.match(l.note, /superseded/, 'with a note saying it was superseded');
  t.equal(l.document_id, w.document_id, 'both items are the one document');
  const doc = kb.getDocument('c', w.document_id!);
  t.equal(doc.content_sha256, sha256(V2), 'the document is at v2');
  t.equal(doc.status, 'ready');
  const discarded = doc.history.filter((h) => h.action === 'skipped' && /superseded/.test(h.detail ?? ''));
  t.equal(discarded.length, 1, 'the history records the discarded older read');
  t.equal(discarded[0]!.job_id, loser.id);
  t.equal(discarded[0]!.content_sha256, sha256(V1), 'naming the content discarded');
  t.equal((await search(kb, 'c', 'pelican')).results.length, 1, 'v2 is searchable');
  t.equal((await search(kb, 'c', 'walrus')).results.length, 0, 'nothing of v1 is');
}

/** J1 reads v1 and is held; `change` makes v2 the source's content; J2 ingests it; J1 goes on. */
async function olderCommitsLast(fx: OrderFixture, add: () => Promise<JobRecord>, change: () => void): Promise<{ j1: JobRecord; j2: JobRecord }> {
  const held = fx.hold(sha256(V1));
  const j1 = await add();
  await held.reached;
  change();
  const j2 = await ended(fx.kb, await add());
  held.release();
  return { j1: await ended(fx.kb, j1), j2 };
}

t.test('local file replaced while its big old version is being ingested: v2 stays', async (t) => {
  const dir = tempDir(t, 'kb-order-');
  const file = path.join(dir, 'notes.txt');
  fs.writeFileSync(file, V1);
  const fx = await startOrderKb(t, { ALLOWED_DIRS: dir });
  fx.kb.createCollection('c', null);
  const { j1, j2 } = await olderCommitsLast(fx, () => fx.kb.addDocuments('c', { paths: [file] }), () => replaceAtomically(file, V2));
  await expectNewest(t, fx.kb, j1, j2);

  // A later job re-reads the file (v2): unchanged, and the newest read stays v2's.
  const again = await ended(fx.kb, await fx.kb.addDocuments('c', { paths: [file] }));
  t.equal(again.items[0]!.stage, 'skipped');
  t.equal(again.items[0]!.note, 'unchanged');
});

t.test('URL whose content changes while the old one is being ingested: v2 stays', async (t) => {
  const fx = await startOrderKb(t);
  let body = V1;
  fx.route('/notes.txt', (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(body);
  });
  fx.kb.createCollection('c', null);
  const url = `${fx.origin}/notes.txt`;
  const { j1, j2 } = await olderCommitsLast(fx, () => fx.kb.addDocuments('c', { urls: [url] }), () => (body = V2));
  await expectNewest(t, fx.kb, j1, j2);
});

t.test('two uploads of one name: the one received last wins though the first commits last', async (t) => {
  const fx = await startOrderKb(t);
  fx.kb.createCollection('c', null);
  let next = V1;
  const upload = () => fx.kb.addDocuments('c', { upload: { bytes: Buffer.from(next), filename: 'notes.txt', contentType: 'text/plain' } });
  const { j1, j2 } = await olderCommitsLast(fx, upload, () => (next = V2));
  await expectNewest(t, fx.kb, j1, j2);
});

t.test('the other order: the newer read is held, the older commits first, then the newer replaces it', async (t) => {
  const dir = tempDir(t, 'kb-order-');
  const file = path.join(dir, 'notes.txt');
  fs.writeFileSync(file, V1);
  const fx = await startOrderKb(t, { ALLOWED_DIRS: dir });
  fx.kb.createCollection('c', null);
  // J1 reads v1 and is held; the file becomes v2; J2 reads v2 and is held; J1 commits, then J2.
  const heldV1 = fx.hold(sha256(V1));
  const j1 = await fx.kb.addDocuments('c', { paths: [file] });
  await heldV1.reached;
  replaceAtomically(file, V2);
  const heldV2 = fx.hold(sha256(V2));
  const j2 = await fx.kb.addDocuments('c', { paths: [file] });
  await heldV2.reached;
  heldV1.release();
  const e1 = await ended(fx.kb, j1);
  t.equal(e1.items[0]!.stage, 'done', 'the older read commits while it is the newest committed');
  heldV2.release();
  const e2 = await ended(fx.kb, j2);
  t.equal(e2.items[0]!.stage, 'done', 'the newer read replaces it');
  const doc = fx.kb.getDocument('c', e2.items[0]!.document_id!);
  t.equal(doc.content_sha256, sha256(V2));
  t.equal(doc.history.filter((h) => h.action === 'ingested').length, 2, 'two versions ingested, none discarded');
  t.equal((await search(fx.kb, 'c', 'walrus')).results.length, 0);
  t.equal((await search(fx.kb, 'c', 'pelican')).results.length, 1);
});
