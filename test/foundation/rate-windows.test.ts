/**
 * plugins/rate-windows.ts counts as @fastify/rate-limit's LocalStore does (the store the server
 * used before without Redis): the same answers on a generated sequence of calls, windows expiring
 * and keys forgotten least recently used first, checked against LocalStore itself with the clock
 * of both held by the test.
 */
import { createRequire } from 'node:module';
import t from 'tap';
import { RateWindows } from '../../plugins/rate-windows.ts';

interface StoreEntry {
  current: number;
  ttl: number;
}
type LocalStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => {
  incr(key: string, cb: (err: Error | null, res: StoreEntry) => void, timeWindow: number, max: number): void;
};
const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as LocalStoreCtor;

/** A small deterministic generator (the same sequence on every run). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

t.test('same answers as LocalStore over 20,000 calls on 5 keys, 4 kept', async (t) => {
  const realNow = Date.now;
  t.teardown(() => {
    Date.now = realNow;
  });
  let now = 1_700_000_000_000;
  Date.now = () => now;
  const max = 5;
  const windowMs = 60_000;
  const capacity = 4;
  const ours = new RateWindows(max, windowMs, capacity);
  const theirs = new LocalStore(false, false, capacity);
  const rnd = random(42);
  let exceeded = 0;
  let mismatches = 0;
  for (let i = 0; i < 20_000; i++) {
    // Mostly a few ms apart, now and then past a whole window.
    now += rnd() < 0.01 ? windowMs : Math.floor(rnd() * 200);
    const key = `k${Math.floor(rnd() * 5)}`;
    let res: StoreEntry | undefined;
    theirs.incr(key, (_err, r) => void (res = r), windowMs, max);
    const expected = { isAllowed: false, max, remaining: Math.max(0, max - res!.current), ttlInSeconds: Math.ceil(res!.ttl / 1000), isExceeded: res!.current > max };
    const got = ours.count(key, now);
    if (got.isExceeded) exceeded++;
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      if (mismatches++ < 3) t.same(got, expected, `call ${i} (${key})`);
    }
  }
  t.equal(mismatches, 0, 'every answer equals LocalStore');
  t.ok(exceeded > 1000, `the sequence runs over the limit (${exceeded} answers over)`);
  t.ok(ours.size <= capacity, 'no more keys than the capacity');
});

t.test('a window resets after windowMs; the least recently used key is forgotten first', async (t) => {
  const w = new RateWindows(2, 1000, 2);
  t.match(w.count('a', 0), { remaining: 1, isExceeded: false, ttlInSeconds: 1 });
  t.match(w.count('a', 10), { remaining: 0, isExceeded: false });
  t.match(w.count('a', 20), { remaining: 0, isExceeded: true });
  t.match(w.count('a', 1000), { remaining: 1, isExceeded: false }, 'a new window');
  w.count('b', 1001);
  w.count('a', 1002); // a is now the most recently used
  w.count('c', 1003); // b goes
  t.match(w.count('a', 1004), { remaining: 0 }, 'a kept its count');
  t.match(w.count('b', 1005), { remaining: 1 }, 'b was forgotten: counted from 1 again');
});
