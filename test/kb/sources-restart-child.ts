/**
 * Child process of sources-restart.test.ts: real services on DATA_DIR argv[2] with ALLOWED_DIRS
 * argv[3]. "first": adds a folder source on argv[3] to collection "synced", waits for its first
 * sync and exits. "resync": syncs that source again and prints "job <id>" and "item <index>
 * <stage>" as its job moves; it stays up until the test kills it with SIGKILL.
 */
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';

const [dataDir, folder, mode] = process.argv.slice(2);
const config = loadConfig({
  DATA_DIR: dataDir!,
  ALLOWED_DIRS: folder!,
  INGEST_CONCURRENCY: '1',
  SOURCES_WATCH: 'false',
  SOURCES_SCHEDULER: 'false',
  SOURCES_LEASE_SECONDS: '5',
});
const services = createServices(config, { startModels: false, inlineExtraction: true, log: pino({ level: 'silent' }) });
const { kb, sources } = services;

if (mode === 'first') {
  const s = await sources.add('synced', { kind: 'folder', path: folder! });
  await sources.settled(s.id);
  const after = sources.get('synced', s.id);
  process.stdout.write(`source ${s.id} ${after.last_status} ${JSON.stringify(after.counts)}\n`);
  await services.close();
  process.exit(0);
}

const [source] = sources.list('synced').items;
await sources.sync('synced', source!.id);
let jobId: string | null = null;
const timer = setInterval(() => {
  jobId = sources.get('synced', source!.id).last_job_id;
  if (!jobId) return;
  clearInterval(timer);
  process.stdout.write(`job ${jobId}\n`);
  kb.subscribe(jobId, (e) => {
    if (e.item) process.stdout.write(`item ${e.item.index} ${e.item.stage}\n`);
    if (e.job) process.stdout.write(`ended ${e.job.status}\n`);
  });
}, 5);
setInterval(() => undefined, 60_000);
