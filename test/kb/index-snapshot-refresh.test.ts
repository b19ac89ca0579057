/**
 * A collection too big for KB_INDEX_CACHE_MB's free room is not opened by the process that
 * commits to it; its snapshot is refreshed once the commits pause (src/kb/snapshot-refresher.ts):
 * the health report counts it behind until then, and a restart opens it from that snapshot at the
 * committed version, with no catch-up from SQLite.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, testConfig } from '../helper.ts';
import { pollUntil } from '../poll.ts';
import { jobEnded, kbWorld } from './surface-fixtures.ts';

interface Ready {
  open: { collection: string; source: string; version: number; opened_by: string }[];
}

t.test('a commit to a collection that does not fit refreshes its snapshot once commits pause', async (t) => {
  const config = testConfig(t, { ALLOW_PRIVATE_NETWORKS: 'true', KB_INDEX_CACHE_MB: '1' });
  const world = await kbWorld(t, { ALLOW_PRIVATE_NETWORKS: 'true', KB_INDEX_CACHE_MB: '1', DATA_DIR: config.DATA_DIR });
  const { app, urls } = world;
  const small = await app.inject({ method: 'POST', url: '/v1/collections/small/documents', payload: { urls: [urls.otters] } });
  t.equal((await jobEnded(app, small.json().id)).status, 'succeeded');
  // Opened by its commit (nothing else was open): the big one then does not fit beside it.
  await pollUntil(async () => ((await app.inject('/ready')).json() as Ready).open.some((o) => o.collection === 'small'), 'the small collection open');

  // Well over 1 MB of index at the registry's estimate (about 1.2 KB a chunk).
  const lines: string[] = [];
  for (let i = 0; i < 30_000; i++) lines.push(`Line ${i}: the harbour crane lifts crate${i} beside ledger${i % 311} at dawn.`);
  const url = world.files.add('manifest.txt', Buffer.from(lines.join('\n')), 'text/plain; charset=utf-8');
  const big = await app.inject({ method: 'POST', url: '/v1/collections/big/documents', payload: { urls: [url] } });
  t.equal((await jobEnded(app, big.json().id)).status, 'succeeded');
  const record = (await app.inject('/v1/collections/big')).json();
  const version = record.version as number;
  const chunks = record.stats.chunks as number;
  t.ok(chunks * 1_200 > 1024 * 1024, `big enough not to fit (${chunks} chunks)`);

  const kbHealth = async () => (await app.inject('/v1/system/health')).json().features.knowledge_base;
  t.notOk(((await app.inject('/ready')).json() as Ready).open.some((o) => o.collection === 'big'), 'not opened by its commit');
  // Behind until its commits pause (REFRESH_IDLE_MS), then refreshed: its snapshot's manifest is
  // renamed into place last (index-snapshot.ts), so its presence means the snapshot is whole.
  await pollUntil(async () => (await kbHealth()).snapshots_behind === 0, 'the refresh to start', { timeoutMs: 60_000 });
  const manifest = path.join(config.DATA_DIR, 'kb', 'indexes', String(record.id), 'manifest.json');
  await pollUntil(() => fs.existsSync(manifest), 'the refreshed snapshot written', { timeoutMs: 60_000 });
  await app.close();

  const again = await buildTestApp(t, { config: { ...config, KB_INDEX_CACHE_MB: 64 } });
  const search = await again.inject({ method: 'POST', url: '/v1/collections/big/search', payload: { query: 'crate4321', min_confidence: 'none', top_k: 1 } });
  t.equal(search.statusCode, 200, search.body);
  t.match(search.json().results[0]?.text, /crate4321\b/, 'the refreshed snapshot holds the last commit');
  const after = (await again.inject('/ready')).json() as Ready;
  t.match(after.open.find((o) => o.collection === 'big'), { source: 'snapshot', version }, 'opened from the refreshed snapshot, no catch-up');
});
