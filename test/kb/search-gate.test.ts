/**
 * Collection searches start one event-loop turn apart, a few at a time, with a bounded wait
 * queue: I/O is served between two searches, and a flood gets OVERLOADED, not a backlog.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import t from 'tap';
import { SearchGate } from '../../src/kb/search-gate.ts';

const busy = (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end);
};

/**
 * `n` 5 ms searches through the gate with /health arriving meanwhile (a macrotask of its own):
 * the order in which they ran.
 */
async function searchesAndHealth(gate: SearchGate, n: number): Promise<string[]> {
  const order: string[] = [];
  const searches = Array.from({ length: n }, (_, i) =>
    gate.run(async () => {
      busy(5);
      order.push(`s${i}`);
    }),
  );
  const health = new Promise<void>((resolve) => setTimeout(() => {
    order.push('health');
    resolve();
  }, 0));
  await Promise.all([...searches, health]);
  return order;
}

t.test('an I/O callback queued behind many searches runs after at most the gate width of them', async (t) => {
  const order = await searchesAndHealth(new SearchGate(1, 100), 10);
  t.ok(order.indexOf('health') <= 2, `health ran after ${order.indexOf('health')} searches, not after all 10 (${order.join(' ')})`);
  t.same(order.filter((x) => x !== 'health'), Array.from({ length: 10 }, (_, i) => `s${i}`), 'searches keep their order');
});

t.test('two searches running side by side still start one event-loop pass apart', async (t) => {
  const order = await searchesAndHealth(new SearchGate(2, 100), 6);
  // Both of a width-2 gate's searches in one check phase would put health after two of them.
  t.ok(order.indexOf('health') <= 1, `health ran after ${order.indexOf('health')} searches (${order.join(' ')})`);
  t.same(order.filter((x) => x !== 'health'), Array.from({ length: 6 }, (_, i) => `s${i}`), 'searches keep their order');
});

t.test('a search that throws at once lets the next one start', async (t) => {
  const gate = new SearchGate(2, 10);
  await t.rejects(gate.run(() => {
    throw new Error('sync failure');
  }), /sync failure/);
  t.equal(await gate.run(async () => 5), 5);
});

t.test('past the wait queue a search is refused with OVERLOADED; the gate recovers', async (t) => {
  const gate = new SearchGate(1, 2);
  let release!: () => void;
  const held = gate.run(() => new Promise<void>((r) => (release = r)));
  await nextTurn();
  const queued = [gate.run(async () => 1), gate.run(async () => 2)];
  await t.rejects(gate.run(async () => 3), { code: 'OVERLOADED' });
  t.same(gate.stats(), { active: 1, waiting: 2, concurrency: 1, queue_max: 2 });
  release();
  await held;
  t.same(await Promise.all(queued), [1, 2]);
  t.equal(await gate.run(async () => 4), 4, 'room again once the queue drained');
});

t.test('a search whose call was aborted while it waited does not run', async (t) => {
  const gate = new SearchGate(1, 10);
  let release!: () => void;
  const held = gate.run(() => new Promise<void>((r) => (release = r)));
  await nextTurn();
  const ac = new AbortController();
  let ran = false;
  const waiting = gate.run(async () => {
    ran = true;
  }, ac.signal);
  ac.abort(new Error('client gone'));
  release();
  await held;
  await t.rejects(waiting, /client gone/);
  t.equal(ran, false);
});
