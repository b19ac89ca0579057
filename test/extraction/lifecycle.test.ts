/**
 * Children do not linger: an idle child exits after the idle time, a child is replaced after its
 * job quota or when its memory stays high after a job, and a replacement starts on demand.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { hostileApp, isAlive, PLAIN_TEXT, poolHealth, processText } from './pool-app.ts';

const until = async (cond: () => boolean | Promise<boolean>, ms: number) => {
  const end = Date.now() + ms;
  while (!(await cond()) && Date.now() < end) await sleep(25);
  return cond();
};

t.test('an idle child exits, and the next call starts a new one', async (t) => {
  const { app, services } = await hostileApp(t, { EXTRACT_CONCURRENCY: '1' }, { idleMs: 300 });
  t.equal((await processText(app, PLAIN_TEXT)).statusCode, 200);
  const [pid] = services.extraction.pids();
  t.ok(pid, 'a child ran the job');
  t.ok(await until(() => !isAlive(pid!), 5000), 'it exited once idle');
  t.equal((await poolHealth(app)).restarts.idle, 1);
  t.equal((await processText(app, `${PLAIN_TEXT} Again.`)).statusCode, 200);
  t.equal((await poolHealth(app)).children_started, 2);
});

t.test('a child is replaced after its job quota', async (t) => {
  const { app, services } = await hostileApp(t, { EXTRACT_CONCURRENCY: '1' }, { recycleAfterJobs: 2 });
  t.equal((await processText(app, `${PLAIN_TEXT} One.`)).statusCode, 200);
  const [first] = services.extraction.pids();
  t.equal((await processText(app, `${PLAIN_TEXT} Two.`)).statusCode, 200);
  t.ok(await until(() => !isAlive(first!), 5000), 'retired after two jobs');
  t.equal((await poolHealth(app)).restarts.recycled, 1);
  t.equal((await processText(app, `${PLAIN_TEXT} Three.`)).statusCode, 200);
  t.not(services.extraction.pids()[0], first, 'a new child serves the third');
});

t.test('a child whose memory stays high after a job is replaced', async (t) => {
  // Any child is over 1 MB: every job retires its child.
  const { app } = await hostileApp(t, { EXTRACT_CONCURRENCY: '1' }, { recycleRssMb: 1 });
  t.equal((await processText(app, PLAIN_TEXT)).statusCode, 200);
  t.ok(await until(async () => (await poolHealth(app)).children === 0, 5000), 'no child kept');
  t.equal((await poolHealth(app)).restarts.recycled, 1);
});

t.test('limits are checked at start-up and resolved from the machine', async (t) => {
  t.throws(() => loadConfig({ EXTRACT_MEMORY_MB: '512', MAX_MEMORY_MB: '256' }), ConfigError);
  t.throws(() => loadConfig({ EXTRACT_MEMORY_MB: '512', MAX_MEMORY_MB: '256' }), /MAX_MEMORY_MB must be at least EXTRACT_MEMORY_MB \(512\)/);
  const auto = loadConfig({ EXTRACT_MEMORY_MB: '256' });
  t.ok(auto.extractConcurrency >= 2 && auto.extractConcurrency <= 8, `EXTRACT_CONCURRENCY=0 resolves to ${auto.extractConcurrency}`);
  t.ok(auto.maxMemoryMb >= 256 && auto.maxMemoryMb <= 16_384, `MAX_MEMORY_MB=0 resolves to ${auto.maxMemoryMb}`);
  const set = loadConfig({ EXTRACT_CONCURRENCY: '3', MAX_MEMORY_MB: '2048' });
  t.equal(set.extractConcurrency, 3);
  t.equal(set.maxMemoryMb, 2048);
});
