/**
 * Child process of jobs-restart.test.ts: real services on DATA_DIR argv[2]; with argv[3] (the
 * loopback origin) it adds one job (two URLs and an upload) to collection "restart" and prints
 * "job <id>" and "item <index> <stage>" as the job moves. It stays up until the test kills it
 * with SIGKILL.
 */
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createServices } from '../../src/services.ts';

const [dataDir, origin] = process.argv.slice(2);
const config = loadConfig({ DATA_DIR: dataDir!, ALLOW_PRIVATE_NETWORKS: 'true', INGEST_CONCURRENCY: '1' });
const services = createServices(config, { startModels: false, inlineExtraction: true, log: pino({ level: 'silent' }) });
const kb = services.kb;
const job = await kb.addDocuments('restart', {
  create: true,
  urls: [`${origin}/first.txt`, `${origin}/stall.txt`],
  upload: { bytes: Buffer.from('Uploaded notes about the narwhal, kept in the spool across a restart.\n'), filename: 'narwhal.txt', contentType: 'text/plain' },
});
process.stdout.write(`job ${job.id}\n`);
kb.subscribe(job.id, (e) => {
  if (e.item) process.stdout.write(`item ${e.item.index} ${e.item.stage}\n`);
});
setInterval(() => undefined, 60_000);
