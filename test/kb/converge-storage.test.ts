/**
 * A full disk mid-job (issue 19, item 5): writes start failing after three documents are done.
 * The remaining documents fail with STORAGE_UNAVAILABLE, the job's end cannot be written, yet
 * GET /v1/jobs/{id} answers the truth from memory (ended, counts that add up, a reason naming the
 * storage), never the stale `running` row; /health says the knowledge base storage is degraded;
 * and once writes work again the end is written by the retry, so a fresh process on the same
 * DATA_DIR reads the same ended job. The full disk is `PRAGMA query_only` on the store's own
 * connection: every write fails in SQLite as it would without space, and no disk is filled.
 */
import pino from 'pino';
import t from 'tap';
import type { KbDatabase } from '../../src/kb/db.ts';
import { KbStore } from '../../src/kb/kb-store.ts';
import { createServices } from '../../src/services.ts';
import { buildTestApp, testConfig } from '../helper.ts';
import { startLocalServer } from '../documents/fixtures/local-server.ts';
import { serve, TEXT_DOC } from './jobs-fixtures.ts';

const WORDS = ['walrus', 'pelican', 'heron', 'gate', 'otter', 'lynx', 'badger', 'marten'];

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

t.test('writes fail mid-job: the job ends with true counts and a reason, never reported running; the end is written once storage is back', async (t) => {
  const config = testConfig(t, { ALLOW_PRIVATE_NETWORKS: 'true', INGEST_CONCURRENCY: '1' });
  let conn: KbDatabase | null = null;
  const services = createServices(config, {
    startModels: false,
    inlineExtraction: true,
    log: pino({ level: 'silent' }),
    openKbStore: (dir) => new KbStore(dir, { onConnection: (db) => (conn = db) }),
  });
  t.teardown(() => services.close());
  const app = await buildTestApp(t, { config, services });
  const server = await startLocalServer();
  t.teardown(() => server.close());
  const gate = { open: false, waiting: false };
  for (const w of WORDS) {
    if (w === 'gate') {
      // Held until the disk is "full", so exactly three documents commit before it.
      server.route('/gate.txt', (_q, res) => {
        gate.waiting = true;
        const send = () => (gate.open ? (res.writeHead(200, { 'content-type': 'text/plain' }), res.end(TEXT_DOC('gate'))) : setTimeout(send, 20));
        send();
      });
    } else serve(server, `/${w}.txt`, TEXT_DOC(w), 'text/plain');
  }

  let res = await app.inject({ method: 'POST', url: '/v1/collections', payload: { name: 'disk' } });
  t.equal(res.statusCode, 201, 'collection created');
  res = await app.inject({ method: 'POST', url: '/v1/collections/disk/documents', payload: { urls: WORDS.map((w) => `${server.origin}/${w}.txt`) } });
  t.equal(res.statusCode, 202, 'job accepted');
  const jobId = res.json().id as string;
  const getJob = async () => (await app.inject(`/v1/jobs/${jobId}`)).json();

  await until('three documents done and the fourth downloading', async () => (await getJob()).counts.done === 3 && gate.waiting);
  t.equal((await app.inject('/health')).json().checks.kb_storage, 'ok', 'storage ok before the disk fills');
  conn!.pragma('query_only = ON');
  gate.open = true;

  // Poll the route itself: from here on it must never answer `running` once the runner stopped.
  let job: Record<string, any> = {};
  await until('the job to end', async () => {
    job = await getJob();
    return job.status !== 'running' && job.status !== 'queued';
  });
  t.equal(job.status, 'partial', 'three documents in, five failed: partial');
  t.same(job.counts, { total: 8, done: 3, skipped: 0, failed: 5, cancelled: 0 }, 'counts add up to the items');
  t.match(job.reason, /storage unavailable: 5 of 8 documents could not be saved/);
  const failed = job.items.filter((i: { stage: string }) => i.stage === 'failed');
  t.equal(failed.length, 5);
  t.ok(failed.every((i: { error: { code: string } }) => i.error.code === 'STORAGE_UNAVAILABLE'), 'each failed item says why');
  t.equal(services.kb.stats().job_ends_unsaved, 1, 'the end is held in memory, its write pending');

  const again = await getJob();
  t.equal(again.status, 'partial', 'asked again: still the truth, not the stale row');
  const listed = (await app.inject('/v1/jobs')).json().items.find((j: { id: string }) => j.id === jobId);
  t.equal(listed.status, 'partial', 'the job list answers the same');
  const cancel = await app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/cancel` });
  t.equal(cancel.statusCode, 409);
  t.match(cancel.json().error, /already ended \(partial\)/);

  const health = await app.inject('/health');
  t.equal(health.statusCode, 200, 'a degraded component, not an unready server');
  t.equal(health.json().status, 'degraded');
  t.equal(health.json().checks.kb_storage, 'degraded');
  t.match(health.json().reason, /kb: .*read-only/, 'the reason names the condition');
  t.notMatch(health.json().reason, config.dataDir, 'never the path');
  const sys = (await app.inject('/v1/system/health')).json();
  t.equal(sys.status, 'degraded');
  t.equal(sys.features.knowledge_base.storage, 'degraded');

  // The disk has room again: the retry (backoff from 0.5 s) writes the end.
  conn!.pragma('query_only = OFF');
  await until('the end to be written', () => services.kb.stats().job_ends_unsaved === 0);
  const fresh = new KbStore(`${config.dataDir}/kb`);
  const stored = fresh.getJob(jobId)!;
  fresh.close();
  t.equal(stored.status, 'partial', 'the stored row now says what the process said');
  t.same(stored.counts, job.counts);
  t.match(stored.reason, /storage unavailable/);
  await until('health to recover', async () => (await app.inject('/health')).json().checks.kb_storage === 'ok');
  t.equal((await app.inject('/health')).json().status, 'ok');
});
