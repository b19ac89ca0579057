/**
 * REDIS_URL unset (the default): no Redis connection object, nothing connects, /health and
 * get_system_health say nothing about Redis, and rate limits are counted in this process as
 * before. The Redis settings parse and reject bad values naming the variable.
 */
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';
import { redactRedisUrl } from '../../src/redis/redis-errors.ts';
import { buildTestApp, testConfig } from '../helper.ts';

t.test('defaults: no REDIS_URL, fail open, prefix rag:', async (t) => {
  const c = loadConfig({});
  t.equal(c.REDIS_URL, '');
  t.equal(c.REDIS_FAILURE_MODE, 'open');
  t.equal(c.REDIS_KEY_PREFIX, 'rag:');
  t.equal(loadConfig({ REDIS_FAILURE_MODE: 'closed' }).REDIS_FAILURE_MODE, 'closed');
  t.equal(loadConfig({ REDIS_URL: 'rediss://:pw@cache.internal:6380/2' }).REDIS_URL, 'rediss://:pw@cache.internal:6380/2');
  t.throws(() => loadConfig({ REDIS_FAILURE_MODE: 'maybe' }), /REDIS_FAILURE_MODE must be one of open, closed/);
  t.throws(() => loadConfig({ REDIS_URL: 'localhost:6379' }), /REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/);
  t.throws(() => loadConfig({ REDIS_KEY_PREFIX: 'has space' }), /REDIS_KEY_PREFIX/);
});

t.test('REDIS_URL unset: createServices makes no Redis connection', async (t) => {
  const services = createServices(testConfig(t), { startModels: false });
  t.teardown(() => services.close());
  t.equal(services.redis, null, 'no connection object');
  const features = Object.assign({}, ...(await Promise.all(services.healthReporters.map((r) => Promise.resolve(r.features?.() ?? {})))));
  t.notOk('redis' in features, 'no redis health section');
});

t.test('REDIS_URL unset: /health has no redis check and the limit is counted in process', async (t) => {
  const app = await buildTestApp(t, { env: { RATE_LIMIT_RPM: '2' } });
  t.equal(app.services.redis, null);
  const h = await app.inject('/health');
  t.equal(h.statusCode, 200);
  t.notOk('redis' in h.json().checks);
  t.equal((await app.inject('/v1/system/health')).statusCode, 200);
  t.equal((await app.inject('/v1/system/health')).statusCode, 200);
  t.equal((await app.inject('/v1/system/health')).statusCode, 429);
});

t.test('REDIS_URL set: the connection object exists but nothing connects until start()', async (t) => {
  // Port 1 on loopback: nothing listens, and nothing may try before start().
  const services = createServices(testConfig(t, { REDIS_URL: 'redis://:pw@127.0.0.1:1' }), { startModels: false });
  t.teardown(() => services.close());
  t.ok(services.redis);
  t.equal(services.redis!.state(), 'starting');
  t.equal(services.redis!.url, 'redis://:***@127.0.0.1:1', 'shown without its password');
  t.throws(() => services.redis!.client, /before start\(\)/, 'no client is made before start()');
});

t.test('redactRedisUrl hides passwords and user names', async (t) => {
  t.equal(redactRedisUrl('redis://127.0.0.1:6379'), 'redis://127.0.0.1:6379');
  t.equal(redactRedisUrl('redis://:secret@h:1/0'), 'redis://:***@h:1/0');
  t.equal(redactRedisUrl('redis://user:secret@h:1'), 'redis://***:***@h:1');
  t.equal(redactRedisUrl('redis://secret@h:1'), 'redis://***@h:1');
  t.notMatch(redactRedisUrl('redis://:se cret@@h'), /se cret/);
});
