/**
 * Admission: each running extraction reserves EXTRACT_MEMORY_MB from MAX_MEMORY_MB. When the
 * budget is full, calls wait in a queue of EXTRACT_QUEUE_MAX; beyond it they are refused with
 * 503 OVERLOADED naming the limit. A waiting call runs once the budget frees.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { holdCommand, hostileApp, poolHealth, processText, warmUp } from './pool-app.ts';

t.test('budget full: one call waits, the next is refused with 503, then the waiting one runs', async (t) => {
  // Budget for one child although two are allowed: memory is the limit here.
  const { app, services } = await hostileApp(t, {
    EXTRACT_CONCURRENCY: '2',
    EXTRACT_MEMORY_MB: '256',
    MAX_MEMORY_MB: '256',
    EXTRACT_QUEUE_MAX: '1',
  });
  await warmUp(services);
  // The first call holds the budget until released, so the queue and the refusal are seen however
  // slow the machine is (no race with a fixed-length extraction).
  const hold = holdCommand(t, 'first');
  const first = processText(app, hold.text);
  while ((await poolHealth(app)).busy !== 1) await sleep(20);
  let secondDone = false;
  const second = processText(app, 'SPIN 10 second').then((r) => ((secondDone = true), r));
  while ((await poolHealth(app)).queued !== 1) await sleep(20);
  const h = await poolHealth(app);
  t.match(h, { busy: 1, queued: 1, memory_reserved_mb: 256, memory_budget_mb: 256, max_children: 1 });
  t.notOk(secondDone, 'the second call waits');

  const third = await processText(app, 'SPIN 10 third');
  t.equal(third.statusCode, 503);
  t.equal(third.json().code, 'OVERLOADED');
  t.match(third.json().error, /MAX_MEMORY_MB=256 MB reserved/);
  t.match(third.json().error, /EXTRACT_QUEUE_MAX=1/);
  t.match(third.json().error, /retry/);

  hold.release();
  const [r1, r2] = await Promise.all([first, second]);
  t.equal(r1.statusCode, 200);
  t.equal(r2.statusCode, 200);
  t.match(r2.json().content, 'second');
  t.match(await poolHealth(app), { busy: 0, queued: 0, memory_reserved_mb: 0, refused: 1 });
});

t.test('concurrency full names EXTRACT_CONCURRENCY; no queue refuses at once', async (t) => {
  const { app, services } = await hostileApp(t, { EXTRACT_CONCURRENCY: '1', EXTRACT_QUEUE_MAX: '0' });
  await warmUp(services);
  const hold = holdCommand(t, 'first');
  const first = processText(app, hold.text);
  while ((await poolHealth(app)).busy !== 1) await sleep(20);
  const refused = await processText(app, 'SPIN 10 second');
  t.equal(refused.statusCode, 503);
  t.match(refused.json().error, /EXTRACT_CONCURRENCY=1 extractions running/);
  hold.release();
  t.equal((await first).statusCode, 200);
});
