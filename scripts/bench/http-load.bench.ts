/**
 * HTTP load: autocannon against REST and /mcp for detect_language and a warm retrieve_chunks
 * (lexical, index in memory) at concurrency 1, 8 and 32, with rate limiting raised: requests per
 * second, p50/p99 latency, errors. Then 10,000 requests while the server's RSS is sampled: it
 * must stay flat (no leak). The server runs in its own process (scripts/bench/serve-app.ts), so
 * the load generator does not share its event loop.
 *
 *   npm run bench:http-load
 */
import path from 'node:path';
import autocannon from 'autocannon';
import { ensureInputs } from './inputs.ts';
import { QUICK, SectionBuilder, isMain, log, round, runStandalone, startChildServer } from './harness.ts';
import type { Section } from './report.ts';
import { postJson, startFileServer } from './servers.ts';

const DETECT_TEXT =
  'The committee reviewed the quarterly results and agreed that the new distribution centre should open in the spring, ' +
  'provided that the budget for staff training is approved before the end of the month.';

interface Target {
  name: string;
  path: string;
  body: string;
  check: (status: number, body: string) => boolean;
}

function mcpCall(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function runCannon(base: string, t: Target, connections: number, opts: { duration?: number; amount?: number }): Promise<autocannon.Result> {
  return autocannon({
    url: base + t.path,
    method: 'POST',
    headers: t.path === '/mcp' ? MCP_HEADERS : { 'content-type': 'application/json' },
    body: t.body,
    connections,
    ...(opts.amount ? { amount: opts.amount } : { duration: opts.duration ?? 5 }),
    timeout: 30,
  });
}

export async function runHttpLoad(): Promise<Section> {
  const inputs = await ensureInputs();
  const files = await startFileServer([inputs.pdf100]);
  const docUrl = files.url(inputs.pdf100);
  const duration = QUICK ? 2 : 5;
  const leakRequests = QUICK ? 2000 : 10000;
  const b = new SectionBuilder('http-load', '6. HTTP load (autocannon)', {
    server: 'separate process, lexical mode (no models), RATE_LIMIT_RPM 1,000,000',
    duration_s_per_point: duration,
    retrieve_chunks: 'warm: 100-page PDF indexed in memory, top_k 5',
  });
  const server = await startChildServer<{ base: string }>(path.join(path.dirname(new URL(import.meta.url).pathname), 'serve-app.ts'), [JSON.stringify({ modelsDir: null })], {
    nodeArgs: ['--expose-gc'],
  });
  const base = server.info.base;
  const raw: Record<string, unknown> = {};
  try {
    // Warm the index once.
    const warm = await postJson<{ results?: unknown[] }>(`${base}/v1/documents/retrieve`, { document_url: docUrl, query: 'distribution of outcomes', top_k: 5 });
    if (warm.status !== 200) throw new Error(`warm-up retrieve_chunks answered ${warm.status}`);
    const query = { document_url: docUrl, query: 'randomized trial of vitamin D in older adults', top_k: 5 };
    const targets: Target[] = [
      { name: 'detect_language REST', path: '/v1/language/detect', body: JSON.stringify({ text: DETECT_TEXT }), check: (s, body) => s === 200 && body.includes('"en"') },
      { name: 'detect_language MCP', path: '/mcp', body: mcpCall('detect_language', { text: DETECT_TEXT }), check: (s, body) => s === 200 && body.includes('language_code') && !body.includes('"isError":true') },
      { name: 'retrieve_chunks REST (warm)', path: '/v1/documents/retrieve', body: JSON.stringify(query), check: (s, body) => s === 200 && body.includes('"results"') },
      { name: 'retrieve_chunks MCP (warm)', path: '/mcp', body: mcpCall('retrieve_chunks', query), check: (s, body) => s === 200 && body.includes('results') && !body.includes('"isError":true') },
    ];
    // Each target answers correctly before it is loaded.
    for (const t of targets) {
      const res = await fetch(base + t.path, { method: 'POST', headers: t.path === '/mcp' ? MCP_HEADERS : { 'content-type': 'application/json' }, body: t.body });
      const text = await res.text();
      if (!t.check(res.status, text)) throw new Error(`${t.name}: unexpected answer ${res.status} ${text.slice(0, 300)}`);
    }
    const table = b.table('Throughput and latency', ['endpoint', 'concurrency', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'requests', '2xx', 'non-2xx', 'errors + timeouts']);
    let worstErrors = 0;
    const nonOk429: string[] = [];
    for (const t of targets) {
      for (const c of [1, 8, 32]) {
        log(`load ${t.name} c=${c}`);
        const r = await runCannon(base, t, c, { duration });
        const errs = r.errors + r.timeouts;
        worstErrors = Math.max(worstErrors, errs);
        const non2xx = r.non2xx;
        if (non2xx > 0) nonOk429.push(`${t.name} c=${c}: ${non2xx} non-2xx (${JSON.stringify(r.statusCodeStats)})`);
        table.rows.push([t.name, c, round(r.requests.average, 0), r.latency.p50, r.latency.p99, r.latency.max, r.requests.total, r['2xx'], non2xx, errs]);
        raw[`${t.name} c=${c}`] = { requests: r.requests, latency: r.latency, errors: r.errors, timeouts: r.timeouts, non2xx, status: r.statusCodeStats };
      }
    }
    b.check('no errors or timeouts at any concurrency (rate limit raised)', worstErrors === 0 && nonOk429.length === 0, worstErrors === 0 && nonOk429.length === 0 ? 'all requests answered 2xx' : `${worstErrors} errors; ${nonOk429.join('; ')}`);

    // Memory over many requests: REST and MCP retrieve_chunks and detect_language in turn, in 10
    // phases; after each, the server runs a full GC and reports RSS and heap. Without the GC, RSS
    // mostly shows V8 growing its heap lazily, which is not a leak.
    log(`leak check: ${leakRequests} requests`);
    const phases = 10;
    const samples: Array<{ done: number; rss_mb: number; heap_used_mb: number; rss_no_gc_mb: number }> = [];
    let errors = 0;
    let total = 0;
    let seconds = 0;
    for (let p = 1; p <= phases; p++) {
      const r = await autocannon({
        url: base,
        connections: 8,
        amount: leakRequests / phases,
        timeout: 30,
        requests: [
          { method: 'POST', path: '/v1/documents/retrieve', headers: { 'content-type': 'application/json' }, body: JSON.stringify(query) },
          { method: 'POST', path: '/mcp', headers: MCP_HEADERS, body: mcpCall('retrieve_chunks', query) },
          { method: 'POST', path: '/v1/language/detect', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: DETECT_TEXT }) },
        ],
      });
      errors += r.errors + r.timeouts + r.non2xx;
      total += r.requests.total;
      seconds += r.duration;
      const rssNoGc = server.rssMb();
      const m = await server.ask<{ rss_mb: number; heap_used_mb: number; gc: boolean }>();
      if (!m.gc) throw new Error('the server was started without --expose-gc');
      samples.push({ done: (p * leakRequests) / phases, rss_mb: m.rss_mb, heap_used_mb: m.heap_used_mb, rss_no_gc_mb: rssNoGc });
    }
    const first = samples[0];
    const mid = samples[Math.floor(phases / 2) - 1];
    const last = samples[samples.length - 1];
    const mem = b.table(`Server memory over ${leakRequests} requests (REST + MCP retrieve_chunks and detect_language, concurrency 8), after a full GC at each point`, [
      'requests so far',
      'RSS MB (after GC)',
      'heap used MB (after GC)',
      'RSS MB before the GC',
    ]);
    for (const x of samples) mem.rows.push([x.done, round(x.rss_mb, 1), round(x.heap_used_mb, 1), round(x.rss_no_gc_mb, 1)]);
    mem.note = `${round(total / seconds, 0)} req/s overall; ${errors} errors or non-2xx answers.`;
    const heapGrowth = last.heap_used_mb - mid.heap_used_mb;
    const rssGrowth = last.rss_mb - first.rss_mb;
    b.check(
      'memory flat under load (heap after GC grows < 5 MB over the second half; RSS after GC < 10 % above the first point)',
      heapGrowth < 5 && rssGrowth < first.rss_mb * 0.1,
      `heap ${round(mid.heap_used_mb, 1)} -> ${round(last.heap_used_mb, 1)} MB; RSS ${round(first.rss_mb, 1)} -> ${round(last.rss_mb, 1)} MB (before GC up to ${round(Math.max(...samples.map((x) => x.rss_no_gc_mb)), 1)} MB)`,
    );
    raw.leak = { samples, errors };
  } finally {
    await server.stop();
    await files.close();
  }
  b.section.data = raw;
  return b.finish();
}

if (isMain(import.meta.url)) await runStandalone(runHttpLoad);
