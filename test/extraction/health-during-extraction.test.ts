/**
 * A long parse runs in a child, so the server's event loop stays free: /health answers while the
 * extraction is still running. The extraction holds its child until the test releases it, so it
 * is provably still running during every probe however loaded the machine is; were it run in the
 * server's own process, the held event loop would answer no probe at all.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { holdCommand, hostileApp, poolHealth, processText, warmUp } from './pool-app.ts';

t.test('GET /health answers while an extraction holds its child', async (t) => {
  const { app, services } = await hostileApp(t, { EXTRACT_CONCURRENCY: '1' });
  await warmUp(services);
  const hold = holdCommand(t, 'long parse');
  let finished = false;
  const extraction = processText(app, hold.text).then((r) => {
    finished = true;
    return r;
  });
  // Wait until the child has the job.
  while ((await poolHealth(app)).busy !== 1) await sleep(20);
  for (let probe = 0; probe < 20; probe++) {
    const res = await app.inject({ method: 'GET', url: '/health' });
    t.equal(res.statusCode, 200, `probe ${probe + 1} answered`);
  }
  t.notOk(finished, 'the extraction was still running after the last probe');
  t.equal((await poolHealth(app)).busy, 1, 'its child still holds it');
  hold.release();
  const res = await extraction;
  t.equal(res.statusCode, 200);
  t.match(res.json().content, 'long parse');
});
