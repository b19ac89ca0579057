/**
 * A long parse runs in a child, so the server's event loop stays free: /health answers quickly
 * while the extraction is still running.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { hostileApp, poolHealth, processText, warmUp } from './pool-app.ts';

t.test('GET /health answers while a 6 s extraction runs', async (t) => {
  const { app, services } = await hostileApp(t, { EXTRACT_CONCURRENCY: '1' });
  await warmUp(services);
  let finished = false;
  const extraction = processText(app, 'SPIN 6000').then((r) => {
    finished = true;
    return r;
  });
  // Wait until the child has the job.
  while ((await poolHealth(app)).busy !== 1) await sleep(20);
  const latencies: number[] = [];
  while (!finished && latencies.length < 20) {
    const started = performance.now();
    const res = await app.inject({ method: 'GET', url: '/health' });
    latencies.push(performance.now() - started);
    t.equal(res.statusCode, 200);
    await sleep(100);
  }
  t.notOk(finished, 'the extraction was still running after the last probe');
  t.equal(latencies.length, 20);
  // Generous for a loaded 2-core machine: inline, each probe would wait the whole 6 s.
  t.ok(Math.max(...latencies) < 1000, `every probe under 1 s (max ${Math.round(Math.max(...latencies))} ms)`);
  const res = await extraction;
  t.equal(res.statusCode, 200);
  t.match(res.json().content, 'SPIN 6000');
});
