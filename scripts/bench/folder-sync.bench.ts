/**
 * Folder source sync of a 10,000-file folder (src/kb/sources/sync.ts) on real services: the first
 * sync (every file walked, read, hashed and ingested by one job) and a no-change resync (walked
 * and stat'ed only: same size and mtime, nothing read, no job). Prints the time of each, the
 * files the walk read and hashed, and what the sync's job ingested.
 *
 *   npx tsx scripts/bench/folder-sync.bench.ts                   # 10,000 files, extraction in process
 *   npx tsx scripts/bench/folder-sync.bench.ts --files 2000 --children
 *
 * Extraction runs in process by default (the files are small markdown notes, so a child process
 * per parse would measure the pool, not the sync); --children uses the extraction processes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';

const args = process.argv.slice(2);
const arg = (name: string, dflt: number): number => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const FILES = arg('--files', 10_000);
const PER_DIR = 100;

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-sync-bench-'));
const folder = path.join(base, 'files');
const words = ['harbor', 'lantern', 'orchard', 'quarry', 'meadow', 'glacier', 'canyon', 'tundra'];
for (let i = 0; i < FILES; i++) {
  const dir = path.join(folder, `d${Math.floor(i / PER_DIR)}`);
  if (i % PER_DIR === 0) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `note-${i}.md`), `# Note ${i}\n\nNote ${i} is about the ${words[i % words.length]} and item${i}. ${'Plain filler text. '.repeat(8)}\n`);
}

/** The sync's summary lines (event kb.source.synced), read from the services' own log. */
const synced: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n')) {
      if (!line.includes('kb.source.synced')) continue;
      synced.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  },
});
const config = loadConfig({
  DATA_DIR: path.join(base, 'data'),
  ALLOWED_DIRS: folder,
  SOURCES_WATCH: 'false',
  SOURCES_SCHEDULER: 'false',
  LOG_LEVEL: 'info',
});
const services = createServices(config, { startModels: false, inlineExtraction: !args.includes('--children'), log: pino({ level: 'info' }, sink) });
const { kb, sources } = services;

interface Run {
  ms: number;
  counts: Record<string, number>;
  seen: number;
  hashed: number;
  jobId: string | null;
  jobDocs: number;
}

async function timed(start: () => Promise<string>): Promise<Run> {
  const before = synced.length;
  const t0 = performance.now();
  const id = await start();
  await sources.settled(id);
  const ms = performance.now() - t0;
  const s = sources.get('bench', id);
  const line = synced[before] ?? {};
  const job = s.last_job_id ? kb.getJob(s.last_job_id) : null;
  return {
    ms,
    counts: (s.counts ?? {}) as unknown as Record<string, number>,
    seen: Number(line.files_seen ?? 0),
    hashed: Number(line.files_hashed ?? 0),
    jobId: s.last_job_id,
    jobDocs: job ? job.counts.done + job.counts.skipped : 0,
  };
}

let sourceId = '';
let code = 0;
try {
  const first = await timed(async () => (sourceId = (await sources.add('bench', { kind: 'folder', path: folder, watch: false })).id));
  const again = await timed(async () => (await sources.sync('bench', sourceId)).id);
  const row = (label: string, r: Run) =>
    `| ${label} | ${(r.ms / 1000).toFixed(2)} | ${r.seen} | ${r.hashed} | ${r.counts.new ?? 0} | ${r.counts.unchanged ?? 0} | ${r.jobId ? r.jobDocs : 'no job'} |`;
  process.stdout.write(
    [
      `Folder source sync: ${FILES} markdown files in ${Math.ceil(FILES / PER_DIR)} folders, extraction ${args.includes('--children') ? 'in child processes' : 'in process'}, INGEST_CONCURRENCY ${config.INGEST_CONCURRENCY}`,
      '',
      '| sync | s | files walked | files read + hashed by the walk | new | unchanged | documents run by its job |',
      '|---|---|---|---|---|---|---|',
      row('first', first),
      row('no-change resync', again),
      '',
      `The no-change resync took ${((again.ms / first.ms) * 100).toFixed(1)}% of the first sync's time and read ${again.hashed} files (size and mtime unchanged: stat only).`,
      '',
    ].join('\n'),
  );
  if (first.counts.new !== FILES || again.counts.unchanged !== FILES || again.hashed !== 0 || again.jobId !== null) {
    process.stderr.write(`unexpected: first ${JSON.stringify(first.counts)}, resync ${JSON.stringify(again.counts)} hashed ${again.hashed} job ${again.jobId}\n`);
    code = 1;
  }
} finally {
  await services.close();
  fs.rmSync(base, { recursive: true, force: true });
}
process.exit(code);
