/**
 * plugins/warm-up.ts: tasks queued with app.afterStart run after the server answered its first
 * request (so that request is not queued behind them), or after the delay when no request comes;
 * one failing task is logged and does not stop the next. Real listens on 127.0.0.1; without a
 * listen (app.inject) the onListen hook that arms them never fires.
 */
import Fastify from 'fastify';
import t from 'tap';
import warmUpPlugin from '../../plugins/warm-up.ts';
import { captureLogs } from './log-capture.ts';
import { pollUntil } from '../poll.ts';

const HOUR = 3_600_000;

t.test('tasks wait for the first answer, then run in order', async (t) => {
  const app = Fastify();
  t.teardown(() => app.close());
  await app.register(warmUpPlugin, { delayMs: HOUR });
  const ran: string[] = [];
  let ranBeforeAnswer: string[] | undefined;
  app.get('/ping', async () => {
    ranBeforeAnswer = [...ran];
    return { ok: true };
  });
  app.afterStart('first', async () => void ran.push('first'));
  app.afterStart('second', async () => void ran.push('second'));
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const res = await fetch(`${address}/ping`);
  t.equal(res.status, 200);
  t.same(ranBeforeAnswer, [], 'no task ran before the first request was answered');
  await pollUntil(() => ran.length === 2, 'both tasks');
  t.same(ran, ['first', 'second']);
  app.afterStart('late', async () => void ran.push('late'));
  await pollUntil(() => ran.length === 3, 'a task queued after the start');
  t.same(ran, ['first', 'second', 'late']);
});

t.test('without any request the tasks run after the delay; a failure is logged and the next task still runs', async (t) => {
  const logs = captureLogs();
  const app = Fastify({ loggerInstance: logs.logger });
  t.teardown(() => app.close());
  await app.register(warmUpPlugin, { delayMs: 20 });
  const ran: string[] = [];
  app.afterStart('broken', async () => {
    throw new Error('cannot load');
  });
  app.afterStart('fine', async () => void ran.push('fine'));
  await app.listen({ host: '127.0.0.1', port: 0 });
  await pollUntil(() => ran.length === 1, 'the task after the failing one');
  const failed = logs.events('warm_up.failed')[0];
  t.ok(failed, 'the failure is logged');
  t.equal(failed?.task, 'broken');
});
