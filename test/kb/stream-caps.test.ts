/**
 * Stream slots: past STREAM_MAX_PER_CLIENT open streams a client gets 429 RATE_LIMITED as JSON
 * (with Retry-After) before anything streams, another client (its own API key) still gets in up to
 * STREAM_MAX_TOTAL, and a closed stream gives its slot back.
 */
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { listenLoopback } from './surface-fixtures.ts';
import { fakeJob, stalledReader, until } from './stream-fixtures.ts';

const KEY_A = 'stream-key-a-0123456789';
const KEY_B = 'stream-key-b-0123456789';

t.test('per-client and server-wide caps answer 429 before streaming; a closed stream frees its slot', async (t) => {
  const app = await buildTestApp(t, { env: { API_KEYS: `${KEY_A},${KEY_B}`, STREAM_MAX_PER_CLIENT: '2', STREAM_MAX_TOTAL: '3' } });
  const base = await listenLoopback(app);
  const fake = fakeJob(app);
  const path = `/v1/jobs/${fake.job.id}/events`;
  const a = { authorization: `Bearer ${KEY_A}` };
  const b = { authorization: `Bearer ${KEY_B}` };

  const first = await stalledReader(base, path, a);
  const second = await stalledReader(base, path, a);
  t.teardown(() => {
    first.destroy();
    second.destroy();
  });
  await until(() => app.streams.stats().open === 2, 'two open streams');

  const refused = await fetch(`${base}${path}`, { headers: a });
  t.equal(refused.status, 429, 'a third stream of the same key is refused');
  t.match(refused.headers.get('content-type'), /application\/json/);
  t.ok(Number(refused.headers.get('retry-after')) > 0, 'with Retry-After');
  t.match(await refused.json(), { code: 'RATE_LIMITED', error: /STREAM_MAX_PER_CLIENT/ });

  const other = await fetch(`${base}${path}`, { headers: b });
  t.equal(other.status, 200, 'another key has its own share');
  const full = await fetch(`${base}${path}`, { headers: b });
  t.equal(full.status, 429, 'the server-wide cap holds');
  t.match(await full.json(), { code: 'RATE_LIMITED', error: /STREAM_MAX_TOTAL/ });
  t.equal(app.streams.stats().open, 3);

  first.destroy();
  await until(() => app.streams.stats().open === 2, 'the closed stream to give its slot back');
  const again = await fetch(`${base}${path}`, { headers: a });
  t.equal(again.status, 200, 'a slot freed by a closed stream can be taken again');

  fake.end();
  await Promise.all([other.text(), again.text()]);
  // The job's end ends every stream of it, the stalled reader's too.
  await until(() => app.streams.stats().open === 0, 'the ended streams to close');
  t.equal(fake.subscribers(), 0, 'no subscription is left');
});
