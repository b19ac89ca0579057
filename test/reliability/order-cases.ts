/**
 * Issue 19, items 3 and 4, against the real server (a child process on loopback):
 *
 * - newest read wins: a 2 MB v1 of a file is being ingested by job J1 when the file is replaced
 *   atomically (write + rename) by a small v2 and job J2 ingests it; whichever commits first, the
 *   document must end at v2, searchable, with nothing of v1, in every round. The row notes in how
 *   many rounds J1 really committed last (its item 'superseded'): the race the rule exists for.
 * - snapshot of another database: 51 notes ingested and the index snapshot saved at a clean stop;
 *   kb.sqlite moved away, DATA_DIR/kb/indexes kept; after a restart 51 other notes go into a new
 *   collection (id 1, version 51 again); searches must find them, and nothing of the old notes.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, Server, sleep, type ServerOptions } from './harness.ts';
import type { Row } from './table.ts';

const G = 'order';
const json = { 'content-type': 'application/json' };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

interface Job {
  id: string;
  status: string;
  items: Array<{ stage: string; note: string | null; document_id: string | null; error: { code: string } | null }>;
}

async function post(server: Server, route: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const a = await call(`${server.base}${route}`, { headers: json, body: JSON.stringify(body), timeoutMs: 120_000 });
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(a.body);
  } catch {
    // not JSON: the status says enough
  }
  return { status: a.status, json: parsed };
}

async function getJob(server: Server, id: string): Promise<Job> {
  const a = await call(`${server.base}/v1/jobs/${id}`, { timeoutMs: 30_000 });
  if (a.status !== 200) throw new Error(`GET /v1/jobs/${id} answered ${a.status}: ${a.body.slice(0, 200)}`);
  return JSON.parse(a.body) as Job;
}

/** Polls until the job ends (generous deadline: a loaded CI machine). */
async function ended(server: Server, id: string, ms = 180_000): Promise<Job> {
  const until = Date.now() + ms;
  for (;;) {
    const job = await getJob(server, id);
    if (!['queued', 'running'].includes(job.status)) return job;
    if (Date.now() > until) throw new Error(`job ${id} still ${job.status} after ${ms / 1000} s`);
    await sleep(50);
  }
}

async function ingest(server: Server, collection: string, paths: string[]): Promise<Job> {
  const r = await post(server, `/v1/collections/${collection}/documents`, { paths });
  if (r.status !== 202) throw new Error(`ingest answered ${r.status}: ${JSON.stringify(r.json).slice(0, 200)}`);
  return r.json as Job;
}

async function hits(server: Server, collection: string, query: string): Promise<number> {
  const r = await post(server, `/v1/collections/${collection}/search`, { query, top_k: 5 });
  if (r.status !== 200) throw new Error(`search answered ${r.status}: ${JSON.stringify(r.json).slice(0, 200)}`);
  return (r.json as { results: unknown[] }).results.length;
}

/** A distinct alphabetic word (the q ending keeps stemming from merging two of them). */
function word(prefix: string, i: number): string {
  let s = '';
  for (let n = i + 26; n > 0; n = Math.floor(n / 26)) s = String.fromCharCode(97 + (n % 26)) + s;
  return `${prefix}${s}q`;
}

function row(input: string, ms: number | null, problems: string[], answer: string, note?: string): Row {
  return { group: G, input, bytes: null, answer, ms, healthMaxMs: null, rssPeakMb: null, pass: problems.length === 0, reason: problems.length ? problems.join('; ') : note };
}

async function newestReadWins(base: ServerOptions, rounds: number): Promise<Row> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-reliability-order-'));
  let server: Server | undefined;
  const problems: string[] = [];
  let supersededRounds = 0;
  const t0 = Date.now();
  try {
    server = await Server.start({ ...base, env: { ...base.env, ALLOWED_DIRS: root, INGEST_CONCURRENCY: '4' } });
    for (let r = 0; r < rounds; r++) {
      const name = `order-${r}`;
      const file = path.join(root, `notes-${r}.txt`);
      const oldWord = word('walrus', r);
      const newWord = word('pelican', r);
      const line = `The ${oldWord} survey records every sighting of the ${oldWord} along the coast.\n`;
      const v1 = `Notes about ${oldWord}\n\n${line.repeat(Math.ceil((2 * 1024 * 1024) / line.length))}`;
      const v2 = `Notes about ${newWord}\n\nThe ${newWord} appears in this short note. ${newWord} is the topic.\n`;
      fs.writeFileSync(file, v1);
      await post(server, '/v1/collections', { name });
      const j1 = await ingest(server, name, [file]);
      // J1 has read v1 once its item is past downloading; then v2 replaces the file.
      const until = Date.now() + 60_000;
      for (;;) {
        const j = await getJob(server, j1.id);
        const stage = j.items[0]?.stage ?? 'queued';
        if (!['queued', 'downloading'].includes(stage) || Date.now() > until) break;
        await sleep(5);
      }
      fs.writeFileSync(`${file}.tmp`, v2);
      fs.renameSync(`${file}.tmp`, file);
      const j2 = await ended(server, (await ingest(server, name, [file])).id);
      const e1 = await ended(server, j1.id);
      if (e1.items[0]?.note?.startsWith('superseded')) supersededRounds++;
      const docs = await call(`${server.base}/v1/collections/${name}/documents`, { timeoutMs: 30_000 });
      const items = (JSON.parse(docs.body) as { items: Array<{ content_sha256: string | null }> }).items;
      const where = `round ${r + 1}`;
      if (j2.items[0]?.stage !== 'done' && j2.items[0]?.stage !== 'skipped') problems.push(`${where}: J2 ended ${j2.items[0]?.stage}`);
      if (e1.items[0]?.stage === 'failed') problems.push(`${where}: J1 failed (${e1.items[0]?.error?.code})`);
      if (items.length !== 1) problems.push(`${where}: ${items.length} documents for one file`);
      else if (items[0]!.content_sha256 !== sha256(v2)) problems.push(`${where}: the document stays at ${items[0]!.content_sha256 === sha256(v1) ? 'v1' : 'unknown content'} although v2 is on disk`);
      if ((await hits(server, name, newWord)) === 0) problems.push(`${where}: v2 not searchable`);
      if ((await hits(server, name, oldWord)) !== 0) problems.push(`${where}: v1 still answers`);
    }
  } catch (err) {
    problems.push(`harness error: ${(err as Error).message.slice(0, 300)}`);
  } finally {
    await server?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
  return row(
    `file v1 (2 MB) replaced by v2 during its ingestion, both ingested (${rounds} rounds)`,
    Date.now() - t0,
    problems,
    problems.length ? 'older version stays' : 'v2 every round',
    `J1 committed after J2 (superseded) in ${supersededRounds} of ${rounds} rounds`,
  );
}

function writeNotes(dir: string, prefix: string, n: number): void {
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) {
    const w = word(prefix, i);
    fs.writeFileSync(path.join(dir, `note-${i}.txt`), `Note ${i}\n\nThis note is about ${w}. The ${w} is described here, and ${w} again.\n`);
  }
}

async function snapshotOfAnotherDatabase(base: ServerOptions): Promise<Row> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-reliability-snapshot-'));
  const dataDir = path.join(root, 'data');
  const opts: ServerOptions = { ...base, dataDir, env: { ...base.env, ALLOWED_DIRS: root } };
  const problems: string[] = [];
  const N = 51;
  const t0 = Date.now();
  let server: Server | undefined;
  try {
    writeNotes(path.join(root, 'old'), 'oldword', N);
    writeNotes(path.join(root, 'new'), 'newword', N);
    server = await Server.start(opts);
    await post(server, '/v1/collections', { name: 'notes' });
    const first = await ended(server, (await ingest(server, 'notes', [path.join(root, 'old')])).id);
    if (first.status !== 'succeeded') problems.push(`first ingest ${first.status}`);
    if ((await hits(server, 'notes', word('oldword', 3))) === 0) problems.push('the old notes were not searchable');
    await server.stop(); // a clean stop saves the index snapshot
    const manifest = path.join(dataDir, 'kb', 'indexes', '1', 'manifest.json');
    if (!fs.existsSync(manifest)) problems.push('no index snapshot was saved at the stop');
    for (const f of fs.readdirSync(path.join(dataDir, 'kb'))) if (f.startsWith('kb.sqlite')) fs.renameSync(path.join(dataDir, 'kb', f), path.join(root, f));

    server = await Server.start(opts);
    await post(server, '/v1/collections', { name: 'notes' });
    const second = await ended(server, (await ingest(server, 'notes', [path.join(root, 'new')])).id);
    if (second.status !== 'succeeded') problems.push(`second ingest ${second.status}`);
    const c = JSON.parse((await call(`${server.base}/v1/collections/notes`, { timeoutMs: 30_000 })).body) as { id?: number; version?: number };
    let missing = 0;
    for (let i = 0; i < N; i += 5) if ((await hits(server, 'notes', word('newword', i))) === 0) missing++;
    if (missing) problems.push(`${missing} of ${Math.ceil(N / 5)} searches for the new notes found nothing`);
    if ((await hits(server, 'notes', word('oldword', 3))) !== 0) problems.push('the old database still answers');
    return row(
      `kb.sqlite moved away, indexes/ kept, ${N} new notes (collection id ${c.id ?? '?'}, version ${c.version ?? '?'})`,
      Date.now() - t0,
      problems,
      problems.length ? 'stale answers' : 'new notes found',
    );
  } catch (err) {
    problems.push(`harness error: ${(err as Error).message.slice(0, 300)}`);
    return row(`kb.sqlite moved away, indexes/ kept, ${N} new notes`, Date.now() - t0, problems, 'error');
  } finally {
    await server?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** The group's rows: `rounds` of the ordering race, then the snapshot of another database. */
export async function runOrderCases(base: ServerOptions, rounds: number): Promise<Row[]> {
  return [await newestReadWins(base, rounds), await snapshotOfAnotherDatabase(base)];
}
