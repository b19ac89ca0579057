/**
 * The load run: autocannon at concurrency 32 cycling through a mix of calls (detect_language over
 * REST and MCP, /health, retrieve_chunks on a small loopback document, process_document multipart
 * uploads of small generated files). Passes with no errors or timeouts, no non-2xx but 429, and
 * RSS flat: the server's tree may grow at most `growthMb` between the end of a warm-up and the end.
 */
import autocannon from 'autocannon';
import { fixtureFile } from '../fixtures-gen/documents.ts';
import { call, measure, treeRssMb, type Server } from './harness.ts';
import type { Origin } from './origin.ts';
import type { Row } from './table.ts';

const G = 'load';
const TEXT = 'The committee reviewed the quarterly results and agreed that the new distribution centre should open in the spring.';
const BOUNDARY = 'reliability-load-boundary';

function multipart(fields: Record<string, string>, file: { name: string; type: string; bytes: Buffer }): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`), file.bytes, Buffer.from(`\r\n--${BOUNDARY}--\r\n`));
  return Buffer.concat(parts);
}

export async function runLoad(server: Server, origin: Origin, calls: number, growthMb: number, rssCeilingMb: number): Promise<Row[]> {
  const docUrl = origin.add('load.txt', { bytes: Buffer.from('Forklifts move pallets between the loading docks and the cold store.\n'.repeat(200)), contentType: 'text/plain' });
  const csv = await fixtureFile('csv');
  const html = await fixtureFile('html');
  const form = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
  const jsonHeaders = { 'content-type': 'application/json' };
  const requests: autocannon.Request[] = [
    { method: 'POST', path: '/v1/language/detect', headers: jsonHeaders, body: JSON.stringify({ text: TEXT }) },
    { method: 'GET', path: '/health' },
    { method: 'POST', path: '/v1/documents/retrieve', headers: jsonHeaders, body: JSON.stringify({ document_url: docUrl, query: 'cold store pallets', top_k: 3 }) },
    { method: 'POST', path: '/v1/documents/process', headers: form, body: multipart({}, { name: 'customers.csv', type: 'text/csv', bytes: csv }) as unknown as string },
    {
      method: 'POST',
      path: '/mcp',
      headers: { ...jsonHeaders, accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'detect_language', arguments: { text: TEXT } } }),
    },
    { method: 'POST', path: '/v1/documents/retrieve', headers: form, body: multipart({ query: 'heron', top_k: '3' }, { name: 'birds.html', type: 'text/html', bytes: html }) as unknown as string },
  ];
  // Each kind answers correctly before it is loaded.
  for (const r of requests) {
    const a = await call(server.base + r.path!, { method: r.method, headers: r.headers as Record<string, string>, body: r.body as string | undefined, timeoutMs: 60_000 });
    if (a.status !== 200) {
      return [{ group: G, input: `warm-up ${r.method} ${r.path}`, bytes: null, answer: `${a.status} ${a.code ?? ''}`, ms: a.ms, healthMaxMs: 0, rssPeakMb: 0, pass: false, reason: a.body.slice(0, 200) }];
    }
  }
  const cannon = (amount: number) =>
    new Promise<autocannon.Result>((resolve, reject) => {
      autocannon({ url: server.base, connections: 32, amount, requests, timeout: 60 }, (err, res) => (err ? reject(err) : resolve(res)));
    });
  await cannon(Math.min(1000, Math.ceil(calls / 5)));
  const rssStart = treeRssMb(server.pid);
  const t0 = performance.now();
  const m = await measure(server, () => cannon(calls));
  const ms = performance.now() - t0;
  const rssEnd = treeRssMb(server.pid);
  const res = m.value;
  const byStatus = Object.entries((res as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {}).map(
    ([s, v]) => `${s} x${v.count}`,
  );
  const bad = Object.entries((res as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {}).filter(
    ([s]) => !s.startsWith('2') && s !== '429',
  );
  const problems: string[] = [];
  if (bad.length) problems.push(`non-2xx other than 429: ${bad.map(([s, v]) => `${s} x${v.count}`).join(', ')}`);
  if (res.errors || res.timeouts) problems.push(`${res.errors} errors, ${res.timeouts} timeouts`);
  if (rssEnd - rssStart > growthMb) problems.push(`RSS grew ${Math.round(rssEnd - rssStart)} MB (${Math.round(rssStart)} -> ${Math.round(rssEnd)}), bound ${growthMb} MB`);
  if (m.rssPeakMb > rssCeilingMb) problems.push(`RSS peak ${Math.round(m.rssPeakMb)} MB over ${rssCeilingMb} MB`);
  if (!server.alive()) problems.push('server died');
  return [
    {
      group: G,
      input: `${calls} calls, c=32, mix of 6 (incl. uploads)`,
      bytes: null,
      answer: byStatus.join(', '),
      ms,
      healthMaxMs: m.healthMaxMs,
      rssPeakMb: m.rssPeakMb,
      pass: problems.length === 0,
      reason: problems.length
        ? problems.join('; ')
        : `${Math.round(res.requests.average)} req/s, p99 ${res.latency.p99} ms; RSS ${Math.round(rssStart)} -> ${Math.round(rssEnd)} MB (flat: growth <= ${growthMb} MB); /health under load is reported, not judged`,
    },
  ];
}
