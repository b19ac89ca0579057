/**
 * A document that needs more memory than EXTRACT_MEMORY_MB is stopped in its child: native memory
 * by the RSS watchdog, JS heap by the child's heap limit. Either way the call is a 413 naming the
 * limit, the child is replaced, and the next call succeeds.
 */
import t from 'tap';
import { hostileApp, PLAIN_TEXT, poolHealth, processText } from './pool-app.ts';

const { app } = await hostileApp(t, { EXTRACT_MEMORY_MB: '256', EXTRACT_CONCURRENCY: '1' });

for (const command of ['ALLOCATE-NATIVE', 'ALLOCATE-HEAP']) {
  t.test(`${command}: 413 naming EXTRACT_MEMORY_MB, then the next call works`, async (t) => {
    const before = process.memoryUsage.rss();
    const res = await processText(app, command);
    t.equal(res.statusCode, 413);
    const body = res.json();
    t.equal(body.code, 'PAYLOAD_TOO_LARGE');
    t.match(body.error, /needed more than EXTRACT_MEMORY_MB=256 MB/);
    t.notMatch(body.error, /\/tmp|\/work|node_modules/, 'no internal paths');
    t.ok(process.memoryUsage.rss() - before < 200 * 1024 * 1024, 'the server itself did not take the allocation');

    const next = await processText(app, PLAIN_TEXT);
    t.equal(next.statusCode, 200);
    t.match(next.json().content, 'Herons wade');
  });
}

t.test('health counts the memory restarts', async (t) => {
  const h = await poolHealth(app);
  t.equal(h.restarts.memory, 2);
  t.equal(h.memory_limit_mb, 256);
  t.equal(h.busy, 0);
});

t.test('without the watchdog, the heap limit alone still ends in a 413', async (t) => {
  // The watchdog would look once an hour: only --max-old-space-size can stop this child.
  const { app } = await hostileApp(t, { EXTRACT_MEMORY_MB: '192', EXTRACT_CONCURRENCY: '1' }, { watchIntervalMs: 3_600_000 });
  const res = await processText(app, 'ALLOCATE-HEAP');
  t.equal(res.statusCode, 413);
  t.match(res.json().error, /needed more than EXTRACT_MEMORY_MB=192 MB/);
  t.equal((await poolHealth(app)).restarts.memory, 1);
  t.equal((await processText(app, PLAIN_TEXT)).statusCode, 200);
});
