/**
 * MCP over stdio against hostile input: the real CLI in a child process, fed raw lines. Every
 * line is answered (a parse error, an invalid request, invalid params, or the reply to the
 * request), stdout carries nothing but JSON-RPC, and the server keeps answering afterwards.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import t from 'tap';
import { CLI_BIN, tempDir } from '../helper.ts';

interface Reply {
  jsonrpc: string;
  id: string | number | null;
  result?: Record<string, unknown> & { structuredContent?: Record<string, unknown>; isError?: boolean };
  error?: { code: number; message: string };
}

t.test('stdio: every line gets an answer and the process keeps serving', async (t) => {
  const cwd = tempDir(t);
  const child = spawn(process.execPath, [CLI_BIN, '--transport', 'stdio'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), LOG_LEVEL: 'warn' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const stdoutLines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    stdoutLines.push(line);
    waiting.shift()?.(line);
  });
  let read = 0;
  const nextReply = () =>
    new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply within 20 s; stderr: ${stderr.slice(-2000)}`)), 20_000);
      const take = (line: string) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as Reply);
      };
      if (read < stdoutLines.length) take(stdoutLines[read++]);
      else
        waiting.push((line) => {
          read++;
          take(line);
        });
    });
  const send = async (line: string | Buffer) => {
    if (!child.stdin.write(line)) await new Promise((r) => child.stdin.once('drain', r));
  };
  const ask = async (line: string | Buffer) => {
    await send(line);
    return nextReply();
  };
  const request = (id: number, method: string, params?: unknown) => `${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) })}\n`;

  const init = await ask(request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } }));
  t.equal(init.id, 1);
  t.ok(init.result?.serverInfo, 'initialized');
  await send(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);

  const healthCall = (id: number) => request(id, 'tools/call', { name: 'get_system_health', arguments: {} });
  const expectations: [string, string | Buffer, number, RegExp, (string | number | null)?][] = [
    ['not JSON', 'this is not json\n', -32700, /^Parse error: the line is not valid JSON/],
    ['truncated JSON', '{"jsonrpc":"2.0","id":5,"method":"tools/li\n', -32700, /^Parse error: the line is not valid JSON/],
    ['an empty line', '\n', -32700, /^Parse error: empty line/],
    ['JSON nested 100,000 deep', `${'['.repeat(100_000)}${']'.repeat(100_000)}\n`, -32700, /^Parse error: .*deeper than 64 levels/],
    [
      'a tools/call nested 100,000 deep',
      `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"detect_language","arguments":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}}\n`,
      -32700,
      /deeper than 64 levels/,
    ],
    ['a line over 2 MiB', `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"${'x'.repeat(3 * 1024 * 1024)}"}}\n`, -32700, /^Parse error: the line is longer than 2 MiB/],
    ['JSON that is not JSON-RPC', '{"hello":"world","id":8}\n', -32600, /^Invalid Request/, 8],
    ['a batch', `[${JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' })}]\n`, -32600, /batches are not supported/],
    ['a number', '42\n', -32600, /^Invalid Request/],
    ['tools/call with a numeric name', request(10, 'tools/call', { name: 5, arguments: {} }), -32602, /^Invalid params for tools\/call: params\.name: expected string/, 10],
    ['tools/call with string arguments', request(11, 'tools/call', { name: 'detect_language', arguments: 'x' }), -32602, /params\.arguments: expected object/, 11],
    ['an unknown method', request(12, 'tools/destroy'), -32601, /Method not found/, 12],
  ];
  for (const [what, line, code, message, id = null] of expectations) {
    const reply = await ask(line);
    t.equal(reply.jsonrpc, '2.0', `${what}: JSON-RPC`);
    t.equal(reply.error?.code, code, `${what}: code ${code} (${JSON.stringify(reply).slice(0, 200)})`);
    t.match(reply.error?.message, message, `${what}: message`);
    t.equal(reply.id, id, `${what}: id`);
    // The server still answers a real request after each bad line.
    const health = await ask(healthCall(100));
    t.equal(health.result?.structuredContent?.status, 'ok', `${what}: then a tools/call is answered`);
  }

  // A bad line and a good one in the same write, and CRLF line endings.
  await send(`garbage\r\n${healthCall(200).trimEnd()}\r\n`);
  const [a, b] = [await nextReply(), await nextReply()];
  t.equal(a.error?.code, -32700);
  t.equal(b.id, 200);
  t.equal(b.result?.structuredContent?.status, 'ok');

  // A message split across writes is put back together.
  const split = healthCall(201);
  await send(split.slice(0, 20));
  await new Promise((r) => setTimeout(r, 50));
  const whole = await ask(split.slice(20));
  t.equal(whole.id, 201);

  t.equal(child.exitCode, null, 'the process is still running');
  for (const line of stdoutLines) t.doesNotThrow(() => JSON.parse(line), 'stdout carries only JSON-RPC');

  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 0, 'exits cleanly when stdin closes');
});
