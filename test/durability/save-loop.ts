/**
 * Child process for kill-during-save.test.ts: saves index "doc" in DATA dir argv[2] over and over,
 * alternating versions, and prints "saved <version>" after each save. The test kills it with
 * SIGKILL at random moments.
 */
import { createHash } from 'node:crypto';
import { IndexStore } from '../../src/retrieval/store/index-store.ts';
import { versionData } from './save-versions.ts';

const dir = process.argv[2]!;
const store = new IndexStore({ dir });
for (let v = 0; ; v = (v + 1) % 2) {
  await store.save('doc', versionData(v));
  process.stdout.write(`saved ${v} ${createHash('sha256').update(String(v)).digest('hex').slice(0, 8)}\n`);
}
