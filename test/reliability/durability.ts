/**
 * kill -9 durability: index two small documents, start indexing a big one and SIGKILL the server
 * while it writes (a `.tmp-` folder under DATA_DIR/indexes, or after a few seconds), restart on the
 * same DATA_DIR, then check that interrupted writes were swept, and that every document answers
 * exactly as it did before the kill and as a server with a fresh DATA_DIR answers.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { textLarge } from './bombs.ts';
import { call, Server, sleep, treeRssMb, type ServerOptions } from './harness.ts';
import type { Origin } from './origin.ts';
import type { Row } from './table.ts';

const G = 'kill -9';

interface Query {
  url: string;
  query: string;
}

/** What a retrieve_chunks answer says, minus what may legitimately differ (timings, ids). */
async function answerOf(server: Server, q: Query): Promise<string> {
  const a = await call(`${server.base}/v1/documents/retrieve`, {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ document_url: q.url, query: q.query, top_k: 5 }),
    timeoutMs: 300_000,
  });
  if (a.status !== 200) return `HTTP ${a.status} ${a.code ?? ''}`;
  const j = JSON.parse(a.body) as { results: { text: string; chunk_index: number }[]; total_chunks_indexed: number };
  return JSON.stringify({ n: j.total_chunks_indexed, r: j.results.map((r) => [r.chunk_index, r.text.slice(0, 80)]) });
}

/** Leftovers of interrupted writes: `.tmp-`/`.old-`/`.trash-` folders and files under the data folder. */
function leftovers(dataDir: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const full = path.join(dir, n);
      if (/^\.(tmp|old|trash)-/.test(n) || /\.tmp$/.test(n)) out.push(path.relative(dataDir, full));
      else if (depth < 3 && fs.statSync(full, { throwIfNoEntry: false })?.isDirectory()) walk(full, depth + 1);
    }
  };
  walk(dataDir, 0);
  return out;
}

function row(input: string, ms: number | null, problems: string[], answer: string, note?: string): Row {
  return { group: G, input, bytes: null, answer, ms, healthMaxMs: null, rssPeakMb: null, pass: problems.length === 0, reason: problems.length ? problems.join('; ') : note };
}

export async function runDurability(origin: Origin, base: ServerOptions, bigMb: number, killAfterMs: number): Promise<Row[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-reliability-kill-'));
  const rows: Row[] = [];
  const big = textLarge(bigMb);
  const queries: Query[] = [
    { url: origin.add('kill-a.txt', { bytes: Buffer.from('Cranes lift containers from the ships at the north quay.\n'.repeat(300)), contentType: 'text/plain' }), query: 'cranes north quay' },
    { url: origin.add('kill-b.html', { bytes: Buffer.from(`<html><body>${'<p>The lighthouse keeper logs the tide every hour.</p>'.repeat(300)}</body></html>`), contentType: 'text/html' }), query: 'lighthouse tide' },
  ];
  const bigQuery = { url: origin.add('kill-big.txt', { bytes: big, contentType: 'text/plain' }), query: 'zeppelin over the lighthouse' };
  const opts: ServerOptions = { ...base, dataDir: path.join(dataDir, 'data') };
  let first: Server | undefined;
  let second: Server | undefined;
  let fresh: Server | undefined;
  try {
    first = await Server.start(opts);
    const before: string[] = [];
    for (const q of queries) before.push(await answerOf(first, q));
    // Not awaited: the server dies under it.
    const pending = answerOf(first, bigQuery).catch(() => 'killed');
    const indexes = path.join(opts.dataDir!, 'indexes');
    const t0 = Date.now();
    let moment = `after ${killAfterMs / 1000} s of work`;
    while (Date.now() - t0 < killAfterMs) {
      if (leftovers(opts.dataDir!).some((l) => l.startsWith('indexes'))) {
        moment = `while writing its index (${Date.now() - t0} ms in)`;
        break;
      }
      await sleep(5);
    }
    const rssAtKill = treeRssMb(first.pid);
    await first.killHard();
    await pending;
    const leftAtKill = leftovers(opts.dataDir!);
    // The write window is short, so a kill rarely lands in it: leave what one would (a half-written
    // index folder), so the start-up sweep is checked every time, not by luck.
    const planted = path.join(indexes, '.tmp-reliability-interrupted-0000');
    fs.mkdirSync(planted, { recursive: true });
    fs.writeFileSync(path.join(planted, 'chunks.json'), '[{"text":"half a wri');
    rows.push(row('SIGKILL during indexing of a big document', Date.now() - t0, [], 'killed', `${moment}; ${leftAtKill.length} leftovers of its own on disk (+1 half-written index planted); RSS ${Math.round(rssAtKill)} MB at the kill`));

    const t1 = Date.now();
    second = await Server.start(opts);
    const restartMs = Date.now() - t1;
    // The start-up sweep may run just after listening: give it a moment.
    let left = leftovers(opts.dataDir!);
    for (let i = 0; i < 20 && left.length; i++) {
      await sleep(250);
      left = leftovers(opts.dataDir!);
    }
    rows.push(row('restart on the same DATA_DIR: leftovers swept', restartMs, left.length ? [`${left.length} leftovers of the killed write remain: ${left.slice(0, 3).join(', ')}`] : [], `${left.length} left`));

    const after: string[] = [];
    for (const q of queries) after.push(await answerOf(second, q));
    const t2 = Date.now();
    const bigAfter = await answerOf(second, bigQuery);
    const bigMs = Date.now() - t2;

    fresh = await Server.start(base);
    const clean: string[] = [];
    for (const q of queries) clean.push(await answerOf(fresh, q));
    const bigClean = await answerOf(fresh, bigQuery);

    const problems: string[] = [];
    queries.forEach((q, i) => {
      if (after[i] !== before[i]) problems.push(`${path.basename(q.url)} answers differently after the restart: ${after[i]!.slice(0, 100)} vs ${before[i]!.slice(0, 100)}`);
      if (after[i] !== clean[i]) problems.push(`${path.basename(q.url)} differs from a fresh index`);
    });
    rows.push(row('indexed documents after restart = before = fresh index', null, problems, problems.length ? 'differs' : 'same'));
    const bigProblems = bigAfter !== bigClean ? [`the killed document answers ${bigAfter.slice(0, 100)}; a fresh index ${bigClean.slice(0, 100)}`] : [];
    if (bigAfter.startsWith('HTTP')) bigProblems.push(`the killed document answers ${bigAfter}`);
    rows.push({ ...row('the killed document after restart = fresh index', bigMs, bigProblems, bigAfter.startsWith('HTTP') ? bigAfter : '200 same'), bytes: big.byteLength });
  } catch (err) {
    rows.push(row('kill -9 / restart', null, [`harness error: ${(err as Error).message.slice(0, 300)}`], 'error'));
  } finally {
    await first?.stop();
    await second?.stop();
    await fresh?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}
