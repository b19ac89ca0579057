/**
 * kill -9 at random moments while an index is being written, again and again: after each kill a
 * new store (start-up sweep included) finds exactly one whole version, old or new, that passes
 * every checksum, and no leftovers.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../helper.ts';
import { IndexStore } from '../../src/retrieval/store/index-store.ts';
import { contentOf, COUNT, EMBEDDER, DIM } from './save-versions.ts';
import { SOURCE_LOADER_ARGS } from '../setup/source-loader.ts';

const SCRIPT = path.join(import.meta.dirname, 'save-loop.ts');
const ROUNDS = 8;

t.test('a store killed mid-save always reopens on a whole version', async (t) => {
  const dir = tempDir(t);
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 1000) / 1000;
  for (let round = 0; round < ROUNDS; round++) {
    const child = spawn(process.execPath, [...SOURCE_LOADER_ARGS, SCRIPT, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    // Wait for one committed save, then kill at a random moment of the following ones.
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('saved')) resolve();
      });
      child.on('exit', () => reject(new Error(`save loop exited early: ${err}`)));
    });
    await new Promise((r) => setTimeout(r, Math.floor(random() * 700)));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const store = new IndexStore({ dir });
    const meta = await store.peekMeta('doc');
    t.ok(meta, `round ${round}: a committed version is there`);
    const version = [0, 1].find((v) => contentOf(v) === meta!.contentSha256);
    t.not(version, undefined, `round ${round}: it is one of the two versions`);
    const index = await store.load('doc', { embedderId: EMBEDDER, dimension: DIM, contentSha256: meta!.contentSha256 });
    t.ok(index, `round ${round}: it passes every checksum`);
    t.equal(index!.chunks.length, COUNT);
    t.ok(index!.chunks.every((c) => c.text.startsWith(`version ${version} `)), `round ${round}: chunks all of version ${version}`);
    t.same(await fs.readdir(dir), ['doc'], `round ${round}: no leftovers after the sweep (${out.trim().split('\n').length} saves done)`);
  }
});
