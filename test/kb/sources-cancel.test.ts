/**
 * Cancelling a sync's job stops its deletions too: they are the job's last steps, so a cancel
 * while its documents run leaves the gone documents in place (counted as not deleted, the job's
 * deletion steps cancelled) and the next sync deletes them. More gone documents than one job may
 * hold are deleted over the next syncs, none refused. Through REST (app.inject).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, tempDir } from '../helper.ts';
import { pollUntil } from '../poll.ts';

type SourceView = { running: boolean; last_status: string; last_sync_at: string | null; last_job_id: string | null; counts: Record<string, number>; notes: string[] };

async function source(app: FastifyInstance, id: string): Promise<SourceView> {
  return (await app.inject('/v1/collections/cx/sources')).json().items.find((x: { id: string }) => x.id === id);
}

async function settled(app: FastifyInstance, id: string, after: string | null): Promise<SourceView> {
  let s = await source(app, id);
  await pollUntil(async () => {
    s = await source(app, id);
    return Boolean(s && !s.running && s.last_sync_at && s.last_sync_at !== after && s.last_status !== 'running');
  }, 'the sync to end', { timeoutMs: 120_000, everyMs: 20 });
  return s;
}

t.test("cancelling a sync's job cancels its deletions; the next sync does them", async (t) => {
  const root = fs.realpathSync(tempDir(t, 'src-cancel-'));
  for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(root, `old-${i}.md`), `# Old ${i}\nOld note ${i} about quartz.\n`);
  const app = await buildTestApp(t, { env: { ALLOWED_DIRS: root, SOURCES_WATCH: 'false', SOURCES_SCHEDULER: 'false', INGEST_CONCURRENCY: '1' } });
  const added = await app.inject({ method: 'POST', url: '/v1/collections/cx/sources', payload: { kind: 'folder', path: root } });
  t.equal(added.statusCode, 201, added.body);
  const id = added.json().id as string;
  let s = await settled(app, id, null);
  t.match(s.counts, { new: 5 });

  for (let i = 0; i < 5; i++) fs.rmSync(path.join(root, `old-${i}.md`));
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(root, `new-${i}.md`), `# New ${i}\nNew note ${i} about basalt.\n`);
  const before = s.last_sync_at;
  t.equal((await app.inject({ method: 'POST', url: `/v1/collections/cx/sources/${id}/sync` })).statusCode, 202);
  let jobId: string | null = null;
  await pollUntil(async () => (jobId = (await source(app, id)).last_job_id) !== null, "the sync's job to exist", { timeoutMs: 120_000, everyMs: 5 });
  const cancel = await app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/cancel` });
  t.equal(cancel.statusCode, 200, cancel.body);
  s = await settled(app, id, before);
  t.equal(s.last_status, 'cancelled', JSON.stringify(s));
  t.equal(s.counts.gone, 0, 'nothing deleted by the cancelled sync');
  t.match(s.notes.join('\n'), /5 gone document\(s\) not deleted: the sync was cancelled/);
  const job = (await app.inject(`/v1/jobs/${jobId}`)).json();
  const steps = job.items.filter((i: { source: string }) => path.basename(i.source).startsWith('old-'));
  t.same(steps.map((i: { stage: string }) => i.stage), ['cancelled', 'cancelled', 'cancelled', 'cancelled', 'cancelled'], "the job's deletion steps were cancelled");
  const listed = (await app.inject('/v1/collections/cx/documents?limit=500')).json();
  t.equal(listed.items.filter((d: { source: string }) => path.basename(d.source).startsWith('old-')).length, 5, 'the gone documents are still there');

  const mid = s.last_sync_at;
  t.equal((await app.inject({ method: 'POST', url: `/v1/collections/cx/sources/${id}/sync` })).statusCode, 202);
  s = await settled(app, id, mid);
  t.equal(s.last_status, 'succeeded', JSON.stringify(s));
  t.equal(s.counts.gone, 5, 'the next sync deletes them');
  const after = (await app.inject('/v1/collections/cx/documents?limit=500')).json();
  t.equal(after.total, 200);
  t.equal(after.items.filter((d: { source: string }) => path.basename(d.source).startsWith('old-')).length, 0);
});

t.test('more gone documents than one job may hold: deleted over the next syncs, none refused', async (t) => {
  const root = fs.realpathSync(tempDir(t, 'src-many-gone-'));
  for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(root, `n-${i}.md`), `# N ${i}\nNote ${i} about slate.\n`);
  // A queue of 4: a sync's job takes at most 2 deletion steps.
  const app = await buildTestApp(t, { env: { ALLOWED_DIRS: root, SOURCES_WATCH: 'false', SOURCES_SCHEDULER: 'false', INGEST_QUEUE_MAX: '4' } });
  const added = await app.inject({ method: 'POST', url: '/v1/collections/cx/sources', payload: { kind: 'folder', path: root } });
  t.equal(added.statusCode, 201, added.body);
  const id = added.json().id as string;
  let s = await settled(app, id, null);
  t.match(s.counts, { new: 5, failed: 0 }, JSON.stringify(s));
  for (let i = 0; i < 5; i++) fs.rmSync(path.join(root, `n-${i}.md`));
  const gone: number[] = [];
  for (let round = 0; round < 3; round++) {
    const before = s.last_sync_at;
    t.equal((await app.inject({ method: 'POST', url: `/v1/collections/cx/sources/${id}/sync` })).statusCode, 202);
    s = await settled(app, id, before);
    t.equal(s.last_status, 'succeeded', JSON.stringify(s));
    gone.push(s.counts.gone!);
    if (round === 0) t.match(s.notes.join('\n'), /3 more gone document\(s\) are left for the next sync/);
  }
  t.same(gone, [2, 2, 1], 'two per sync, then the last one');
  t.equal((await app.inject('/v1/collections/cx/documents')).json().total, 0);
});
