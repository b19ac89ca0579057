/**
 * Slow readers of the job events stream, over real sockets: a reader that never reads is dropped
 * with a final `dropped` event once its backlog passes STREAM_BUFFER_BYTES, and its subscription
 * and stream slot are released; /health answers while 200 such readers are connected; readers that
 * disconnect leave nothing subscribed.
 */
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { listenLoopback, parseSse } from './surface-fixtures.ts';
import { fakeJob, readToEnd, stalledReader, until } from './stream-fixtures.ts';

t.test('a reader that never reads is dropped with a final event and releases its subscription', async (t) => {
  const app = await buildTestApp(t, { env: { STREAM_BUFFER_BYTES: String(64 * 1024) } });
  const base = await listenLoopback(app);
  const fake = fakeJob(app);
  const socket = await stalledReader(base, `/v1/jobs/${fake.job.id}/events`);
  t.teardown(() => socket.destroy());
  await until(() => app.streams.stats().open === 1 && fake.subscribers() === 1, 'the stream to open');

  // Item events are never coalesced: 2 KiB each, 16 per batch (each batch fanned out before the
  // next), until the kernel's buffers and then the server's 64 KiB are full.
  const filler = 'x'.repeat(2 * 1024);
  let sent = 0;
  while (app.streams.stats().open > 0 && sent < 100_000) {
    fake.item(sent % 4, `${sent} ${filler}`);
    sent++;
    if (sent % 16 === 0) await until(() => app.streams.jobEvents.stats().pending === 0, 'the batch to go out');
  }
  t.equal(app.streams.stats().open, 0, `dropped after ${sent} events`);
  t.equal(fake.subscribers(), 0, 'its kb subscription is released');
  t.same(app.streams.jobEvents.stats(), { jobs: 0, readers: 0, pending: 0 }, 'no fan-out entry is left');
  t.equal(app.streams.stats().open, 0, 'its stream slot is given back');

  const text = await readToEnd(socket);
  const events = parseSse(text.slice(text.indexOf('\r\n\r\n') + 4));
  const last = events.at(-1)!;
  t.equal(last.event, 'dropped', 'the last event says it was dropped');
  t.match(last.data, { job_id: fake.job.id, reason: /send buffer full/ });
  t.ok(sent > 100, `the kernel's buffers took the first events (${sent} sent)`);
  t.ok(events.length < sent, `the backlog was discarded (${events.length} events of ${sent})`);
});

t.test('/health answers while 200 readers never read; closing them leaves nothing subscribed', async (t) => {
  const app = await buildTestApp(t, { env: { STREAM_MAX_PER_CLIENT: '1000', STREAM_BUFFER_BYTES: String(64 * 1024) } });
  const base = await listenLoopback(app);
  const fake = fakeJob(app, 8);
  const sockets: import('node:net').Socket[] = [];
  for (let i = 0; i < 200; i++) sockets.push(await stalledReader(base, `/v1/jobs/${fake.job.id}/events`));
  t.teardown(() => sockets.forEach((s) => s.destroy()));
  await until(() => app.streams.stats().open === 200, '200 open streams');
  t.equal(fake.subscribers(), 1, 'one kb subscription serves every stream of the job');

  for (let i = 0; i < 400; i++) {
    fake.progress(i % 8, `tick ${i}`);
    if (i % 50 === 0) fake.item(i % 8, `item ${i}`);
  }
  const health = await fetch(`${base}/health`, { signal: AbortSignal.timeout(30_000) });
  t.equal(health.status, 200, '/health answers');

  for (const s of sockets) s.destroy();
  await until(() => app.streams.stats().open === 0, 'every stream to close');
  t.equal(fake.subscribers(), 0, 'no kb subscription is left');
  t.equal(app.streams.stats().open, 0, 'every slot is given back');
});

t.test('a normal reader gets coalesced progress, every item event in order and the end', async (t) => {
  const app = await buildTestApp(t);
  const base = await listenLoopback(app);
  const fake = fakeJob(app, 2);
  const res = await fetch(`${base}/v1/jobs/${fake.job.id}/events`);
  t.equal(res.status, 200);
  await until(() => fake.subscribers() === 1, 'the subscription');
  for (let i = 0; i < 1000; i++) fake.progress(0, `tick ${i}`);
  for (let i = 0; i < 10; i++) fake.progress(1, `other tick ${i}`);
  await until(() => app.streams.jobEvents.stats().pending === 0, 'the batch to go out');
  fake.progress(1, 'superseded tick');
  fake.item(1, 'second done');
  fake.end();
  const events = parseSse(await res.text());
  t.equal(events[0]!.event, 'state');
  // One batch carries the latest tick per item; an item's end replaces its pending tick.
  const progress = events.filter((e) => e.event === 'progress').map((e) => e.data.message);
  t.same(progress, ['tick 999', 'other tick 9'], '1,010 ticks went out as the latest of each item');
  t.same(events.filter((e) => e.event === 'item').map((e) => e.data.message), ['second done']);
  t.equal(events.at(-1)!.event, 'job');
  const ids = events.map((e) => Number(e.id));
  t.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]!), 'ids increase');
  await until(() => app.streams.stats().open === 0, 'the stream to close');
  t.equal(fake.subscribers(), 0);
});
