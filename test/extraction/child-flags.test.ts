/**
 * The V8 flags an extraction child starts with: Node accepts them at every ceiling the config
 * allows, and the heap limit they give is the ceiling's (the extraction pool relies on it to stop
 * a document's JS heap).
 */
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { childExecArgv, initialOldSpaceMb, semiSpaceMb } from '../../src/extraction/extraction-pool.ts';

t.test('each ceiling gives flags Node starts with and a heap limit of that ceiling', async (t) => {
  for (const mb of [64, 256, 1024, 8192]) {
    const flags = childExecArgv(mb);
    t.same(flags, [`--max-old-space-size=${mb}`, `--max-semi-space-size=${semiSpaceMb(mb)}`, `--initial-old-space-size=${initialOldSpaceMb(mb)}`]);
    t.ok(initialOldSpaceMb(mb) <= mb / 8 || initialOldSpaceMb(mb) === 8, `${mb} MB: an initial old space of ${initialOldSpaceMb(mb)} MB`);
    const run = spawnSync(process.execPath, [...flags, '-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    t.equal(run.status, 0, `${mb} MB: ${run.stderr}`);
    const limitMb = Number(run.stdout) / 2 ** 20;
    // The limit adds the young generation to the old space's ceiling.
    t.ok(limitMb >= mb && limitMb <= mb + 3 * semiSpaceMb(mb) + 16, `${mb} MB: heap limit ${limitMb.toFixed(0)} MB`);
  }
});
