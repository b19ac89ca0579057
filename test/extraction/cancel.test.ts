/**
 * A parser stuck in a busy loop cannot be interrupted from inside: the call times out (504), its
 * child is SIGKILLed at once, and the slot is free for the next call. A child that crashes is a
 * 422, and the pool replaces it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helper.ts';
import { pollUntil } from '../poll.ts';
import { hostileApp, isAlive, PLAIN_TEXT, poolHealth, processText, warmUp } from './pool-app.ts';

t.test('a busy loop times out with 504 and its child is killed', async (t) => {
  const { app, services } = await hostileApp(t, { REQUEST_TIMEOUT: '3', EXTRACT_CONCURRENCY: '1' });
  // A child that has already extracted, so the short timeout measures the busy loop, not a
  // start-up on a busy machine.
  await warmUp(services);
  const pidFile = path.join(tempDir(t), 'pid');
  const res = await processText(app, `BUSY ${pidFile}`);
  t.equal(res.statusCode, 504);
  t.equal(res.json().code, 'TIMEOUT');
  const pid = Number(readFileSync(pidFile, 'utf8'));
  t.ok(pid > 0 && pid !== process.pid, 'the loop ran in a child');
  // The loop never ends by itself: the child is gone only because the pool killed it.
  await pollUntil(() => !isAlive(pid), `child ${pid} to be gone`);
  t.notOk(isAlive(pid), `child ${pid} is gone`);
  const h = await poolHealth(app);
  t.equal(h.restarts.cancelled, 1);
  t.equal(h.memory_reserved_mb, 0, 'its memory reservation is released');
  t.same(services.extraction.pids(), [], 'no child is left');

  await warmUp(services);
  const next = await processText(app, PLAIN_TEXT.replace('dawn', 'dusk'));
  t.equal(next.statusCode, 200, 'a replacement child serves the next call');
});

t.test('a child that crashes is a 422 and is replaced', async (t) => {
  const { app } = await hostileApp(t, { EXTRACT_CONCURRENCY: '1' });
  const res = await processText(app, 'ABORT');
  t.equal(res.statusCode, 422);
  t.equal(res.json().code, 'PROCESSING_ERROR');
  t.match(res.json().error, /extraction process crashed \(SIGABRT\)/);
  t.equal((await poolHealth(app)).restarts.crash, 1);
  t.equal((await processText(app, PLAIN_TEXT)).statusCode, 200);
});
