/**
 * Calls still running when SHUTDOWN_TIMEOUT runs out are answered 503 SHUTTING_DOWN with the error
 * body, not dropped: in process through app.cutInFlight() (REST and MCP), and through the real CLI
 * with a call stuck on a slow loopback origin when SIGTERM arrives.
 */
import http from 'node:http';
import net from 'node:net';
import t from 'tap';
import { buildTestApp, spawnCliServer } from '../helper.ts';
import { makeSlowTool, type SlowProbe } from './test-tools.ts';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

t.test('cutInFlight: a running REST call gets 503 SHUTTING_DOWN with the error body', async (t) => {
  const probe: SlowProbe = { started: false, aborted: false };
  const app = await buildTestApp(t, { extraTools: [makeSlowTool(probe)] });
  const pending = app.inject({ method: 'POST', url: '/v1/test/slow', headers: { 'x-request-id': 'cut-1' }, payload: { ms: 60_000 } });
  await until(() => probe.started);
  await app.cutInFlight(2000);
  const res = await pending;
  t.equal(res.statusCode, 503);
  t.same(res.json(), {
    error: 'The server is shutting down: the call was stopped before it finished; retry it',
    code: 'SHUTTING_DOWN',
    request_id: 'cut-1',
  });
  t.equal(probe.aborted, true, 'the handler was told to stop');
  t.match(probe.abortReason, { code: 'SHUTTING_DOWN' });
});

t.test('cutInFlight: a running MCP tools/call gets an isError result coded SHUTTING_DOWN', async (t) => {
  const probe: SlowProbe = { started: false, aborted: false };
  const app = await buildTestApp(t, { extraTools: [makeSlowTool(probe)] });
  const pending = app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { ...MCP_HEADERS, 'x-request-id': 'cut-mcp' },
    payload: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'test_slow', arguments: { ms: 60_000 } } },
  });
  await until(() => probe.started);
  await app.cutInFlight(2000);
  const res = await pending;
  t.equal(res.statusCode, 200);
  const result = res.json().result;
  t.equal(result.isError, true);
  t.same(JSON.parse(result.content[0].text), {
    error: 'The server is shutting down: the call was stopped before it finished; retry it',
    code: 'SHUTTING_DOWN',
    request_id: 'cut-mcp',
  });
});

t.test('a request arriving while the server closes gets 503 SHUTTING_DOWN with the error body', async (t) => {
  const probe: SlowProbe = { started: false, aborted: false };
  const app = await buildTestApp(t, { extraTools: [makeSlowTool(probe)] });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as net.AddressInfo;
  // One keep-alive connection: a slow call, then (after close begins) a second request on it.
  const socket = net.connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  let received = '';
  socket.on('data', (d) => (received += d));
  const body = JSON.stringify({ ms: 400 });
  socket.write(`POST /v1/test/slow HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
  await until(() => probe.started);
  const closed = app.close();
  await until(() => received.includes('"slept_ms":400'));
  t.match(received, /^HTTP\/1\.1 200 /, 'the call in flight finishes normally');
  received = '';
  socket.write(`GET /v1/system/health HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nx-request-id: late-1\r\n\r\n`);
  await until(() => received.includes('}'), 5000);
  await closed;
  t.match(received, /^HTTP\/1\.1 503 /);
  t.match(received, /connection: close/i);
  const json = JSON.parse(received.slice(received.indexOf('{')));
  t.same(json, { error: 'The server is shutting down; retry the call', code: 'SHUTTING_DOWN', request_id: 'late-1' });
});

t.test('CLI: SIGTERM, SHUTDOWN_TIMEOUT passes, the stuck call gets a coded 503 and the server exits 0', async (t) => {
  // A loopback origin that accepts the download and never answers.
  const hung: http.ServerResponse[] = [];
  const origin = http.createServer((_req, res) => {
    hung.push(res);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  const originPort = (origin.address() as net.AddressInfo).port;
  t.teardown(() => {
    for (const res of hung) res.destroy();
    origin.close();
  });

  const { child, address, stderr: logs } = await spawnCliServer(t, { SHUTDOWN_TIMEOUT: '1', ALLOWED_HOSTS: `127.0.0.1:${originPort}` });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const call = fetch(`${address}/v1/documents/process`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'stuck-1' },
    body: JSON.stringify({ document_url: `http://127.0.0.1:${originPort}/slow.txt` }),
  });
  await until(() => hung.length > 0, 30_000);
  const signalledAt = Date.now();
  child.kill('SIGTERM');
  const res = await call;
  const waited = Date.now() - signalledAt;
  t.equal(res.status, 503);
  t.match(res.headers.get('content-type'), /^application\/json/);
  t.same(await res.json(), {
    error: 'The server is shutting down: the call was stopped before it finished; retry it',
    code: 'SHUTTING_DOWN',
    request_id: 'stuck-1',
  });
  t.ok(waited >= 900, `the call had SHUTDOWN_TIMEOUT (1 s) to finish first (answered after ${waited} ms)`);
  t.equal(await exited, 0);
  const events = logs()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event?: string; code?: string; request_id?: string });
  t.ok(events.some((e) => e.event === 'server.shutdown_timeout'));
  t.ok(events.some((e) => e.event === 'tool.error' && e.code === 'SHUTTING_DOWN' && e.request_id === 'stuck-1'));
  t.ok(events.some((e) => e.event === 'server.stopped'));
});
