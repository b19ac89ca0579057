/**
 * Child process of folder-any-size-restart.test.ts: real services on DATA_DIR argv[2] with
 * ALLOWED_DIRS argv[3], INGEST_QUEUE_MAX 10 and one document at a time; it ingests the folder
 * argv[4] into collection "walk" and prints "job <id>" and "item <index> <stage>" as the job
 * moves. It stays up until the test kills it with SIGKILL.
 */
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';

const [dataDir, allowed, folder] = process.argv.slice(2);
const config = loadConfig({ DATA_DIR: dataDir!, ALLOWED_DIRS: allowed!, INGEST_QUEUE_MAX: '10', INGEST_CONCURRENCY: '1' });
const services = createServices(config, { startModels: false, inlineExtraction: true, log: pino({ level: 'silent' }) });
const kb = services.kb;
const job = await kb.addDocuments('walk', { create: true, paths: [folder!] });
process.stdout.write(`job ${job.id}\n`);
kb.subscribe(job.id, (e) => {
  if (e.item) process.stdout.write(`item ${e.item.index} ${e.item.stage}\n`);
});
setInterval(() => undefined, 60_000);
