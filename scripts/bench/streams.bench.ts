/**
 * `npm run bench:streams`: what long-lived streams and big uploads cost the rest of the server.
 * The server runs as its own process (src/ through tsx) with an origin on loopback; /health is
 * polled one request at a time while each case runs (the reliability harness's measure()):
 *
 *   - 1,000 SSE readers that never read follow a running job: RSS of the server's process tree
 *     against its baseline, while connected and a few seconds after they went
 *   - 1,000 SSE readers that read follow a job to its end: /health max
 *   - 50 MB CSV, text and HTML bodies to process_document: /health max and the call's time
 *
 * The cases are those of the reliability suite's stream group (test/reliability/stream-cases.ts).
 */
import os from 'node:os';
import { QUICK, SectionBuilder, isMain, log, round, runStandalone } from './harness.ts';
import { measure, Server, sleep } from '../../test/reliability/harness.ts';
import { Origin } from '../../test/reliability/origin.ts';
import { runStreamCases, STREAM_GROUP_ENV } from '../../test/reliability/stream-cases.ts';

const HEALTH_BUDGET_MS = 250;
const GROWTH_MB = 150;

export async function runStreams() {
  const b = new SectionBuilder('streams', '8. Streams and big uploads', {
    readers: 1000,
    upload_mb: 50,
    health_budget_ms: HEALTH_BUDGET_MS,
    rss_growth_budget_mb: GROWTH_MB,
    stream_buffer_bytes: 'default (1 MiB)',
  });
  const origin = await new Origin().listen();
  const server = await Server.start({ source: true, env: { ALLOWED_HOSTS: origin.host, ...STREAM_GROUP_ENV } });
  try {
    const idle = await measure(server, () => sleep(QUICK ? 1000 : 3000));
    log(`idle /health max ${round(idle.healthMaxMs, 0)} ms`);
    const rows = await runStreamCases(server, origin, { healthBudgetMs: HEALTH_BUDGET_MS, rssCeilingMb: 4096, callTimeoutMs: 330_000 }, GROWTH_MB);
    const table = b.table('Each case with /health polled throughout', ['case', 'answer', 'ms', '/health max ms', 'RSS peak MB', 'pass']);
    for (const r of rows) {
      table.rows.push([r.input, r.answer, r.ms === null ? null : round(r.ms, 0), r.healthMaxMs === null ? null : round(r.healthMaxMs, 0), r.rssPeakMb === null ? null : round(r.rssPeakMb, 0), r.pass]);
      b.check(r.input, r.pass, r.pass ? r.answer : (r.reason ?? r.answer));
    }
    b.note(`Idle /health max before the cases: ${round(idle.healthMaxMs, 0)} ms. Load average at the end: ${os.loadavg().map((x) => round(x, 2)).join(', ')} on ${os.cpus().length} cores.`);
    return b.finish();
  } finally {
    await server.stop();
    await origin.close();
  }
}

if (isMain(import.meta.url)) await runStandalone(runStreams);
