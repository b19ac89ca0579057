/**
 * Fair sharing of the ingestion queue between API keys (src/kb/tenant-share.ts): one key's big
 * job does not hold back another key's single document by more than one document per slot, and a
 * key cannot fill the whole queue: past its share its new jobs are 429 RATE_LIMITED while other
 * keys still get in. With auth off nothing changes.
 */
import t from 'tap';
import { serve, startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';
import { buildTestApp } from '../helper.ts';
import { startLocalServer } from '../documents/fixtures/local-server.ts';

t.test("one key's 5 jobs of 8 documents delay another key's documents by at most one document per slot", async (t) => {
  const fx = await startKb(t, { API_KEYS: 'k-alpha,k-beta', INGEST_CONCURRENCY: '1' });
  const started: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const doc = (name: string, wait: Promise<void> = Promise.resolve()) =>
    fx.server.route(`/${name}.txt`, (_q, res) => {
      started.push(name);
      void wait.then(() => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(TEXT_DOC(name.replace(/[0-9]/g, 'x')));
      });
    });
  // The first document of key A waits until key B has submitted: the queue then holds both.
  for (let i = 0; i < 40; i++) doc(`a${i}`, i === 0 ? held : undefined);
  for (let i = 0; i < 3; i++) doc(`b${i}`);
  fx.kb.createCollection('team-a', null);
  fx.kb.createCollection('team-b', null);
  const jobsA = [];
  for (let j = 0; j < 5; j++) {
    jobsA.push(await fx.kb.addDocuments('team-a', { urls: Array.from({ length: 8 }, (_, i) => `${fx.server.origin}/a${j * 8 + i}.txt`), tenant: 'API_KEYS[0]' }));
  }
  for (let i = 0; i < 2000 && started.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.same(started, ['a0'], "A's first document is running");
  const jobB = await fx.kb.addDocuments('team-b', { urls: [0, 1, 2].map((i) => `${fx.server.origin}/b${i}.txt`), tenant: 'API_KEYS[1]' });
  release();
  t.equal((await waitEnded(fx.kb, jobB)).status, 'succeeded');
  for (const j of jobsA) t.equal((await waitEnded(fx.kb, j)).status, 'succeeded');
  const at = [0, 1, 2].map((i) => started.indexOf(`b${i}`));
  t.same(at, [1, 3, 5], `keys take turns, one document each (order: ${started.slice(0, 7).join(', ')}…)`);
});

t.test("past its share a key's new jobs are RATE_LIMITED while another key still gets in (REST, API keys)", async (t) => {
  const server = await startLocalServer();
  t.teardown(() => server.close());
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  t.teardown(() => release());
  // Every document is held, so the queue only fills.
  server.route('/slow.txt', (q, res) => {
    void held.then(() => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(TEXT_DOC('held'));
    });
  });
  const app = await buildTestApp(t, {
    env: { ALLOW_PRIVATE_NETWORKS: 'true', API_KEYS: 'k-alpha,k-beta', INGEST_CONCURRENCY: '1', INGEST_QUEUE_MAX: '40', INGEST_QUEUE_MAX_PER_KEY: '10', RATE_LIMIT_RPM: '0' },
  });
  const post = (key: string, collection: string, n: number, from = 0) =>
    app.inject({
      method: 'POST',
      url: `/v1/collections/${collection}/documents`,
      headers: { authorization: `Bearer ${key}` },
      payload: { urls: Array.from({ length: n }, (_, i) => `${server.origin}/slow.txt?n=${from + i}`) },
    });
  for (const [key, name] of [['k-alpha', 'alpha'], ['k-beta', 'beta']] as const) {
    const res = await app.inject({ method: 'POST', url: '/v1/collections', headers: { authorization: `Bearer ${key}` }, payload: { name } });
    t.equal(res.statusCode, 201, `${name} created: ${res.body}`);
  }
  const tooBig = await post('k-alpha', 'alpha', 12);
  t.equal(tooBig.statusCode, 400, 'one job over the per-key share never fits');
  t.match(tooBig.json(), { code: 'VALIDATION_ERROR', error: /INGEST_QUEUE_MAX_PER_KEY 10/ });

  t.equal((await post('k-alpha', 'alpha', 8)).statusCode, 202);
  const over = await post('k-alpha', 'alpha', 5, 100);
  t.equal(over.statusCode, 429, `A past its share: ${over.body}`);
  t.match(over.json(), { code: 'RATE_LIMITED', error: /INGEST_QUEUE_MAX_PER_KEY/ });
  const other = await post('k-beta', 'beta', 5, 200);
  t.equal(other.statusCode, 202, 'B still gets in although A is at its share');
  release();
});

t.test('auth off: one tenant, no per-key share', async (t) => {
  const fx = await startKb(t, { INGEST_QUEUE_MAX: '30', INGEST_QUEUE_MAX_PER_KEY: '5' });
  for (let i = 0; i < 12; i++) serve(fx.server, `/n${i}.txt`, TEXT_DOC(`note${i}`), 'text/plain');
  fx.kb.createCollection('solo', null);
  const job = await fx.kb.addDocuments('solo', { urls: Array.from({ length: 12 }, (_, i) => `${fx.server.origin}/n${i}.txt`) });
  t.equal((await waitEnded(fx.kb, job)).counts.done, 12, 'twelve documents from the single user, over the per-key number, all ingested');
});
