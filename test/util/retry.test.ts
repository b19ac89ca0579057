/** The retry helper shared by the downloader and the HTTP embedder. */
import t from 'tap';
import { parseRetryAfter, withRetries } from '../../src/util/retry.ts';
import { AN_HOUR_MS, within } from '../poll.ts';

class Transient extends Error {
  constructor(readonly retryAfterMs?: number) {
    super('transient');
  }
}
const retryable = (err: unknown) => err instanceof Transient && { retryAfterMs: err.retryAfterMs };

t.test('Retry-After: delta-seconds or an HTTP date, nothing else', async (t) => {
  t.equal(parseRetryAfter('3'), 3000);
  t.equal(parseRetryAfter([' 2 ']), 2000);
  t.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:30 GMT')), 30_000);
  t.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 08:00:00 GMT')), 0, 'a date in the past: now');
  for (const bad of ['1.5', '-1', 'soon', '', null, undefined]) t.equal(parseRetryAfter(bad), undefined, String(bad));
});

t.test('retries transient failures with the backoff, then gives up with the caller\'s error', async (t) => {
  const delays: number[] = [];
  let calls = 0;
  const err = await withRetries(
    async () => {
      calls++;
      throw new Transient();
    },
    { attempts: 3, backoffMs: (n) => n * 100, retryable, giveUp: (e, n) => new Error(`gave up after ${n}: ${(e as Error).message}`), sleep: async (ms) => void delays.push(ms) },
  ).catch((e: unknown) => e);
  t.equal(calls, 3);
  t.same(delays, [100, 200]);
  t.match(err, { message: 'gave up after 3: transient' });
});

t.test('a permanent failure is not retried', async (t) => {
  let calls = 0;
  await t.rejects(
    withRetries(
      async () => {
        calls++;
        throw new Error('bad request');
      },
      { attempts: 5, backoffMs: () => 1, retryable },
    ),
    /bad request/,
  );
  t.equal(calls, 1);
});

t.test('Retry-After is waited for; past the limit it is capped or refused', async (t) => {
  const run = (overLimit: 'cap' | 'fail', retryAfterMs: number) => {
    const delays: number[] = [];
    let calls = 0;
    const p = withRetries(
      async () => {
        if (calls++ === 0) throw new Transient(retryAfterMs);
        return 'ok';
      },
      { attempts: 2, backoffMs: () => 10, retryable, maxRetryAfterMs: 1000, overLimit, retryAfterTooLong: (_e, ms) => new Error(`asked for ${ms} ms`), sleep: async (ms) => void delays.push(ms) },
    );
    return { p, delays };
  };
  const within = run('fail', 500);
  t.equal(await within.p, 'ok');
  t.same(within.delays, [500], 'the server\'s wait, not the backoff');
  const capped = run('cap', 5000);
  t.equal(await capped.p, 'ok');
  t.same(capped.delays, [1000]);
  const refused = run('fail', 5000);
  await t.rejects(refused.p, /asked for 5000 ms/);
  t.same(refused.delays, []);
});

t.test('an abort during the wait ends the call at once with the abort reason', async (t) => {
  const ac = new AbortController();
  // An hour's backoff on the real timer, aborted once the wait has begun (onRetry runs just
  // before it): ending within the minute means the wait was cut, not sat out.
  const call = withRetries(
    async () => {
      throw new Transient();
    },
    { attempts: 3, backoffMs: () => AN_HOUR_MS, retryable, signal: ac.signal, onRetry: () => setImmediate(() => ac.abort(new Error('client went away'))) },
  );
  await t.rejects(within(call, 'the aborted backoff to end'), /client went away/, 'the hour of backoff was not waited out');
  const mapped = new AbortController();
  mapped.abort();
  await t.rejects(withRetries(async () => 'never', { attempts: 1, backoffMs: () => 0, retryable, signal: mapped.signal, abortReason: () => new Error('mapped') }), /mapped/);
});
