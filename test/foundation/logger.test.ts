import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { tempDir } from '../helper.ts';
import { Writable } from 'node:stream';

t.test('with a log folder, JSON lines also go to a daily file there', async (t) => {
  const dir = path.join(tempDir(t), 'logs');
  let console = '';
  const destination = new Writable({
    write(chunk, _e, cb) {
      console += String(chunk);
      cb();
    },
  });
  const { logger, close } = await createLogger({ LOG_LEVEL: 'info', logDir: dir }, { destination });
  logger.info({ event: 'tool.success', request_id: 'abc' }, 'hello');
  logger.debug('not at info level');
  await close();
  const files = readdirSync(dir);
  t.equal(files.length, 1);
  t.match(files[0], /^server\.\d{4}-\d{2}-\d{2}\.1\.log$/);
  const line = JSON.parse(readFileSync(path.join(dir, files[0]), 'utf8').trim());
  t.match(line, { level: 'info', event: 'tool.success', request_id: 'abc', msg: 'hello' });
  t.match(console, /"request_id":"abc"/);
  t.notMatch(console, /not at info level/);
});
