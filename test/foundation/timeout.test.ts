import t from 'tap';
import { buildTestApp, testConfig } from '../helper.ts';
import { makeSlowTool, crashTool, type SlowProbe } from './test-tools.ts';
import { captureLogs } from './log-capture.ts';
import { runTool, toolTimeoutMs } from '../../src/tools/run-tool.ts';
import { createServices } from '../../src/services.ts';
import { getSystemHealthTool } from '../../src/tools/get-system-health.ts';
import { isToolError } from '../../src/errors.ts';
import { AN_HOUR_MS, within } from '../poll.ts';

t.test('a handler that outlives its timeout: prompt 504 TIMEOUT, its signal aborted, logged', async (t) => {
  const probe: SlowProbe = { started: false, aborted: false };
  const logs = captureLogs();
  const app = await buildTestApp(t, { extraTools: [makeSlowTool(probe)], env: { REQUEST_TIMEOUT: '0.3' }, logger: logs.logger });
  // The handler would sleep an hour: an answer within the minute is the timeout's.
  const res = await within(app.inject({ method: 'POST', url: '/v1/test/slow', payload: { ms: AN_HOUR_MS }, headers: { 'x-request-id': 'slow-1' } }), 'the 504');
  t.equal(res.statusCode, 504);
  t.same(res.json(), { error: 'test_slow did not finish within 0.3 s', code: 'TIMEOUT', request_id: 'slow-1' });
  t.equal(probe.started, true);
  t.equal(probe.aborted, true, 'the handler saw its signal abort');
  t.ok(isToolError(probe.abortReason) && probe.abortReason.code === 'TIMEOUT', 'abort reason is the TIMEOUT error');

  const start = logs.events('tool.start').find((l) => l.request_id === 'slow-1');
  const timeout = logs.events('tool.timeout').find((l) => l.request_id === 'slow-1');
  t.ok(start, 'tool.start logged with the request id');
  t.equal(start?.tool, 'test_slow');
  t.equal(start?.timeout_ms, 300);
  t.equal(timeout?.code, 'TIMEOUT');
  t.type(timeout?.elapsed_ms, 'number');
});

t.test('the same guard over MCP: isError TIMEOUT', async (t) => {
  const probe: SlowProbe = { started: false, aborted: false };
  const app = await buildTestApp(t, { extraTools: [makeSlowTool(probe)], env: { REQUEST_TIMEOUT: '0.3' } });
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-request-id': 'mcp-slow' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_slow', arguments: {} } },
  });
  const result = res.json().result;
  t.equal(result.isError, true);
  t.same(JSON.parse(result.content[0].text), { error: 'test_slow did not finish within 0.3 s', code: 'TIMEOUT', request_id: 'mcp-slow' });
  t.equal(probe.aborted, true);
});

t.test('timeouts: class timeout capped by REQUEST_TIMEOUT', async (t) => {
  const tool = (timeoutClass: 'document' | 'extraction' | 'utility') => ({ ...getSystemHealthTool, timeoutClass });
  t.equal(toolTimeoutMs(tool('document'), { REQUEST_TIMEOUT: 300 }), 300_000);
  t.equal(toolTimeoutMs(tool('extraction'), { REQUEST_TIMEOUT: 300 }), 120_000);
  t.equal(toolTimeoutMs(tool('utility'), { REQUEST_TIMEOUT: 300 }), 30_000);
  t.equal(toolTimeoutMs(tool('document'), { REQUEST_TIMEOUT: 60 }), 60_000);
  t.equal(toolTimeoutMs(tool('utility'), { REQUEST_TIMEOUT: 0.5 }), 500);
});

t.test('runTool: success logs elapsed ms; unknown errors become INTERNAL_ERROR; a caller abort stops the handler', async (t) => {
  const services = createServices(testConfig(t));
  t.teardown(() => services.close());
  const logs = captureLogs();
  const out = (await runTool(getSystemHealthTool, {}, { services, log: logs.logger.child({ request_id: 'r1' }), requestId: 'r1', transport: 'rest' })) as { status: string };
  t.equal(out.status, 'ok');
  const success = logs.events('tool.success')[0];
  t.equal(success.request_id, 'r1');
  t.equal(success.tool, 'get_system_health');
  t.type(success.elapsed_ms, 'number');

  const err: any = await runTool(crashTool, {}, { services, log: logs.logger, requestId: 'r2', transport: 'mcp' }).catch((e: any) => e);
  t.ok(isToolError(err));
  t.equal(err.code, 'INTERNAL_ERROR');
  t.equal(err.message, 'Internal server error');
  const logged = logs.events('tool.error')[0];
  t.equal(logged.code, 'INTERNAL_ERROR');
  t.match(JSON.stringify(logged.err), /secret/, 'the real error is in the log, not in the answer');

  const probe: SlowProbe = { started: false, aborted: false };
  const controller = new AbortController();
  const pending = runTool(makeSlowTool(probe), {}, { services, log: logs.logger, requestId: 'r3', signal: controller.signal, transport: 'rest' });
  setTimeout(() => controller.abort(), 50);
  const cancelled: any = await pending.catch((e: any) => e);
  t.equal(cancelled.code, 'PROCESSING_ERROR');
  t.equal(probe.aborted, true);
});

t.test('runTool: a handler that reads its signal only after the call ended still sees it aborted, with the reason', async (t) => {
  const services = createServices(testConfig(t));
  t.teardown(() => services.close());
  const logs = captureLogs();
  // The signal is made when first read: a handler that looks only after its timeout fired, and
  // one that looks after answering, must both find it aborted, as if it had existed all along.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  // The call's timer does not hold the process open (a server's socket does): this one does.
  const alive = setInterval(() => undefined, 1000);
  t.teardown(() => clearInterval(alive));
  let late: AbortSignal | undefined;
  const lateReader = {
    ...getSystemHealthTool,
    name: 'test_late_reader',
    timeoutClass: 'utility' as const,
    async handler(_input: unknown, ctx: { signal: AbortSignal }) {
      await gate;
      late = ctx.signal;
      return { ok: true };
    },
  };
  const timedOut: any = await runTool(lateReader as any, {}, { services: { ...services, config: { ...services.config, REQUEST_TIMEOUT: 0.05 } } as any, log: logs.logger, requestId: 'r4', transport: 'rest' }).catch((e: any) => e);
  t.equal(timedOut.code, 'TIMEOUT');
  release();
  await gate;
  await new Promise((r) => setImmediate(r));
  t.equal(late?.aborted, true, 'read after the timeout: aborted');
  t.equal((late?.reason as any)?.code, 'TIMEOUT', 'with the timeout as its reason');

  let kept: { signal: AbortSignal } | undefined;
  const keeper = { ...lateReader, name: 'test_keeper', async handler(_input: unknown, ctx: { signal: AbortSignal }) {
    kept = ctx;
    return { ok: true };
  } };
  await runTool(keeper as any, {}, { services, log: logs.logger, requestId: 'r5', transport: 'rest' });
  t.equal(kept?.signal.aborted, true, 'read after the answer: aborted (the call has ended)');
});
