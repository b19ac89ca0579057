/**
 * src/request-logger.ts: a request's logger writes exactly what the pino child it stands for would
 * (bindings, levels), and makes that child only when a line at an enabled level is written.
 * Checked on its own with a captured pino, and through the app (request_id on a request's lines).
 */
import t from 'tap';
import { lazyRequestLogger } from '../../src/request-logger.ts';
import { buildTestApp } from '../helper.ts';
import { captureLogs } from './log-capture.ts';

type Logged = Record<string, unknown>;

t.test('lines carry the bindings; disabled levels make no child and write nothing', async (t) => {
  const logs = captureLogs('warn');
  // The logger with its child() counted (the children themselves are the real logger's).
  let children = 0;
  const parent = Object.create(logs.logger) as typeof logs.logger;
  parent.child = ((...args: Parameters<typeof logs.logger.child>) => {
    children++;
    return logs.logger.child(...args);
  }) as typeof logs.logger.child;
  const log = lazyRequestLogger.call(undefined as never, parent, { request_id: 'r-1' }, {}, undefined as never);
  log.info({ event: 'quiet' }, 'not written at warn');
  log.debug('nor this');
  t.equal(children, 0, 'no child for lines below the level');
  t.equal(log.level, 'warn');
  t.equal((log as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled('info'), false);
  log.warn({ event: 'loud' }, 'written');
  log.error(new Error('boom'), 'failed');
  t.equal(children, 1, 'one child, made by the first written line');
  const lines = logs.lines as Logged[];
  t.equal(lines.length, 2);
  t.match(lines[0], { request_id: 'r-1', event: 'loud', msg: 'written', level: 40 });
  t.match(lines[1], { request_id: 'r-1', msg: 'failed', err: { message: 'boom' } });
  const sub = log.child({ tool: 'x' });
  sub.warn('from a child');
  t.match(lines[2], { request_id: 'r-1', tool: 'x', msg: 'from a child' });
});

t.test('route options (a log level of its own) get a real child at once', async (t) => {
  const logs = captureLogs('info');
  const log = lazyRequestLogger.call(undefined as never, logs.logger, { request_id: 'r-2' }, { level: 'error' }, undefined as never);
  t.equal(log.level, 'error');
  log.warn('dropped by the route level');
  log.error('kept');
  t.same((logs.lines as Logged[]).map((l) => l.msg), ['kept']);
});

t.test("through the app: a request's lines carry its request_id", async (t) => {
  const logs = captureLogs('info');
  const app = await buildTestApp(t, { logger: logs.logger });
  const res = await app.inject({ method: 'POST', url: '/v1/language/detect', headers: { 'x-request-id': 'req-42' }, payload: { text: 'Der schnelle braune Fuchs springt über den faulen Hund.' } });
  t.equal(res.statusCode, 200);
  const mine = (logs.lines as Logged[]).filter((l) => l.request_id === 'req-42');
  t.ok(mine.some((l) => l.msg === 'incoming request'), "Fastify's request line");
  t.ok(mine.some((l) => l.event === 'tool.success'), "the tool's line");
});
