/**
 * A folder source through REST (app.inject): added with a glob, synced, then files are edited,
 * added, deleted and renamed; the resync's counts say changed/new/gone/unchanged, search follows,
 * a deleted document's history says why, a second sync finds nothing to do (no job), and the
 * watcher syncs a change on its own (polled with a generous deadline, no fixed sleep).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, tempDir } from '../helper.ts';
import { pollUntil } from '../poll.ts';

async function sourceSettled(app: FastifyInstance, name: string, id: string, after: string | null = null): Promise<Record<string, any>> {
  let s: Record<string, any> = {};
  await pollUntil(async () => {
    const list = (await app.inject(`/v1/collections/${name}/sources`)).json();
    s = list.items.find((x: { id: string }) => x.id === id);
    return Boolean(s && !s.running && s.last_sync_at && s.last_sync_at !== after && s.last_status !== 'running');
  }, `source ${id} to finish a sync`, { timeoutMs: 120_000, everyMs: 50 });
  return s;
}

async function search(app: FastifyInstance, name: string, query: string): Promise<string[]> {
  const res = await app.inject({ method: 'POST', url: `/v1/collections/${name}/search`, payload: { query, top_k: 10, min_confidence: 'none' } });
  t.equal(res.statusCode, 200, res.body);
  return (res.json().results as Array<{ source: string }>).map((r) => path.basename(r.source));
}

t.test('folder source: add, sync, edit/add/delete/rename, resync counts and search', async (t) => {
  const root = fs.realpathSync(tempDir(t, 'src-folder-'));
  const docs = path.join(root, 'docs');
  fs.mkdirSync(path.join(docs, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(docs, 'otters.md'), '# Otters\nSea otters hold hands while sleeping.\n');
  fs.writeFileSync(path.join(docs, 'sub', 'volcano.md'), '# Volcano\nA caldera forms when the magma chamber empties.\n');
  fs.writeFileSync(path.join(docs, 'bread.md'), '# Bread\nSourdough rises with wild yeast.\n');
  fs.writeFileSync(path.join(docs, 'skip.txt'), 'not markdown, left out by the include glob');
  // The watcher is tested below; here syncs come only on demand.
  const app = await buildTestApp(t, { env: { ALLOWED_DIRS: root, SOURCES_WATCH: 'false', SOURCES_SCHEDULER: 'false' } });

  const outside = await app.inject({ method: 'POST', url: '/v1/collections/notes/sources', payload: { kind: 'folder', path: '/etc' } });
  t.equal(outside.statusCode, 403, 'a folder outside ALLOWED_DIRS is refused');
  const wrongField = await app.inject({ method: 'POST', url: '/v1/collections/notes/sources', payload: { kind: 'folder', path: docs, urls: ['http://x.test/'] } });
  t.equal(wrongField.statusCode, 400, 'urls is not a folder setting');

  const added = await app.inject({ method: 'POST', url: '/v1/collections/notes/sources', payload: { kind: 'folder', path: docs, include: ['**/*.md'] } });
  t.equal(added.statusCode, 201, added.body);
  const id = added.json().id as string;
  let s = await sourceSettled(app, 'notes', id);
  t.equal(s.last_status, 'succeeded', JSON.stringify(s));
  t.match(s.counts, { new: 3, changed: 0, unchanged: 0, gone: 0, failed: 0 }, 'first sync: three new');
  t.ok(s.last_job_id, 'the ingestion ran as a job');
  t.same((await search(app, 'notes', 'caldera magma')).slice(0, 1), ['volcano.md']);

  // Nothing changed: nothing is read again, no job.
  const again = await app.inject({ method: 'POST', url: `/v1/collections/notes/sources/${id}/sync`, payload: { wait_seconds: 60 } });
  t.equal(again.statusCode, 202, again.body);
  s = await sourceSettled(app, 'notes', id, s.last_sync_at);
  t.match(s.counts, { new: 0, changed: 0, unchanged: 3, gone: 0 }, 'no-change resync');
  t.equal(s.last_job_id, null, 'no job when nothing needs ingesting');

  // Edit, add, delete, rename.
  fs.writeFileSync(path.join(docs, 'otters.md'), '# Otters\nOtters crack shellfish open with stones used as tools.\n');
  fs.writeFileSync(path.join(docs, 'sub', 'kelp.md'), '# Kelp\nKelp forests shelter many fish.\n');
  fs.rmSync(path.join(docs, 'bread.md'));
  fs.renameSync(path.join(docs, 'sub', 'volcano.md'), path.join(docs, 'sub', 'caldera.md'));
  const before = s.last_sync_at;
  t.equal((await app.inject({ method: 'POST', url: `/v1/collections/notes/sources/${id}/sync` })).statusCode, 202);
  s = await sourceSettled(app, 'notes', id, before);
  t.equal(s.last_status, 'succeeded', JSON.stringify(s));
  t.match(s.counts, { new: 2, changed: 1, unchanged: 0, gone: 2, failed: 0 }, 'edit = changed; add + rename target = new; delete + rename origin = gone');

  t.notOk((await search(app, 'notes', 'sourdough yeast')).includes('bread.md'), 'the deleted file is no longer found');
  t.same((await search(app, 'notes', 'shellfish stones')).slice(0, 1), ['otters.md'], 'the edit is found');
  t.same((await search(app, 'notes', 'caldera magma')).slice(0, 1), ['caldera.md'], 'the renamed file under its new name');
  const listed = (await app.inject('/v1/collections/notes/documents?limit=50')).json();
  t.same(listed.items.map((d: { source: string }) => path.basename(d.source)).sort(), ['caldera.md', 'kelp.md', 'otters.md']);

  // The history of a deleted document says why (jobs and history through the store's audit trail).
  const jobs = (await app.inject('/v1/jobs?collection=notes&limit=10')).json();
  const firstJob = jobs.items.at(-1);
  const breadItem = firstJob.items.find((i: { source: string }) => i.source.endsWith('bread.md'));
  t.ok(breadItem?.document_id, 'the first job ingested bread.md');
  const gone = await app.inject(`/v1/collections/notes/documents/${breadItem.document_id}`);
  t.equal(gone.statusCode, 404, `bread.md is no longer a document: ${gone.body}`);
  t.match(gone.json().error, /was deleted from collection "notes" at .*chunks removed; file deleted/, 'its history says why: the file was deleted');
  // The deletions were steps of the sync's one job, counted in its progress, each with its reason.
  const syncJob = (await app.inject(`/v1/jobs/${s.last_job_id}`)).json();
  const steps = syncJob.items.filter((i: { note: string | null }) => i.note?.startsWith('deleted: '));
  t.same(steps.map((i: { source: string; stage: string; note: string }) => [path.basename(i.source), i.stage, i.note]).sort(), [
    ['bread.md', 'done', 'deleted: file deleted'],
    ['volcano.md', 'done', 'deleted: file deleted'],
  ]);
  t.equal(syncJob.counts.total, 5, 'three documents ingested and two deleted by one job');
  t.equal(syncJob.status, 'succeeded');

  // Changing the globs: the next sync removes what they now leave out.
  const patched = await app.inject({ method: 'PATCH', url: `/v1/collections/notes/sources/${id}`, payload: { exclude: ['sub/**'] } });
  t.equal(patched.statusCode, 200, patched.body);
  t.same(patched.json().settings.exclude, ['sub/**']);
  const before2 = s.last_sync_at;
  await app.inject({ method: 'POST', url: `/v1/collections/notes/sources/${id}/sync` });
  s = await sourceSettled(app, 'notes', id, before2);
  t.match(s.counts, { gone: 2, unchanged: 1 }, 'kelp.md and caldera.md left out by the new exclude');

  const removed = await app.inject({ method: 'DELETE', url: `/v1/collections/notes/sources/${id}` });
  t.equal(removed.statusCode, 200, removed.body);
  t.same((await app.inject('/v1/collections/notes/sources')).json().items, []);
  t.equal((await app.inject('/v1/collections/notes/documents')).json().total, 1, 'removing a source keeps its documents');
});

t.test('a watched folder syncs on file change', async (t) => {
  const root = fs.realpathSync(tempDir(t, 'src-watch-'));
  fs.writeFileSync(path.join(root, 'a.md'), '# A\nalpha particles\n');
  const app = await buildTestApp(t, { env: { ALLOWED_DIRS: root, SOURCES_WATCH_DEBOUNCE_MS: '100', SOURCES_SCHEDULER: 'false' } });
  const added = await app.inject({ method: 'POST', url: '/v1/collections/watched/sources', payload: { kind: 'folder', path: root } });
  t.equal(added.statusCode, 201, added.body);
  t.equal(added.json().watch, true, 'folders are watched by default');
  const id = added.json().id as string;
  const first = await sourceSettled(app, 'watched', id);
  t.match(first.counts, { new: 1 });

  fs.writeFileSync(path.join(root, 'b.md'), '# B\nbeta decay of neutrons\n');
  await pollUntil(async () => (await search(app, 'watched', 'neutrons decay')).includes('b.md'), 'the watcher to ingest b.md', { timeoutMs: 120_000, everyMs: 200 });
  const s = await sourceSettled(app, 'watched', id);
  t.ok(s.counts.new >= 1 || s.counts.unchanged >= 1, JSON.stringify(s.counts));
});
