/**
 * Processes that start together on one fresh DATA_DIR (API replicas and workers of one
 * deployment) all open the knowledge base: the schema is created once, under SQLite's write lock,
 * not once per process (the second would fail on "table already exists").
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { KbStore } from '../../src/kb/kb-store.ts';
import { tempDir } from '../helper.ts';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';

const run = promisify(execFile);
const FIXTURE = path.resolve(import.meta.dirname, 'fixtures/open-store.ts');

t.test('four processes opening a fresh store at the same moment all succeed, and the schema is there once', async (t) => {
  for (let round = 0; round < 3; round++) {
    const dir = path.join(tempDir(t, 'rag-kb-open-'), 'kb');
    const at = String(Date.now() + 1_500);
    const outs = await Promise.all(Array.from({ length: 4 }, () => run(process.execPath, [...SOURCE_LOADER_ARGS, FIXTURE, dir, at], { timeout: 60_000 })));
    t.same(outs.map((o) => o.stdout.trim().split(' ')[0]), ['ok', 'ok', 'ok', 'ok'], `round ${round}: every process opened it`);
    const store = new KbStore(dir);
    t.equal(store.listCollections().length, 4, 'each process wrote to the one database');
    store.close();
  }
});
