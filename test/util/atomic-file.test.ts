/** The one atomic-file module: whole-or-none writes, no temporary left behind, digests of the bytes written. */
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { commitTempFile, digestFile, fsyncDir, fsyncFile, tempPathFor, writeFileAtomic, writeFileSynced } from '../../src/util/atomic-file.ts';

async function tmpDir(t: Test): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'atomic-file-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

/** Distinct, recognisable content of `size` bytes: every byte is `fill`. */
const filled = (size: number, fill: number) => new Uint8Array(size).fill(fill);

t.test('writes the whole file, creates a missing folder, and leaves only the target', async (t) => {
  const dir = await tmpDir(t);
  const file = path.join(dir, 'a', 'b', 'data.json');
  const digest = await writeFileAtomic(file, '{"v":1}');
  t.equal(await fs.readFile(file, 'utf8'), '{"v":1}');
  t.same(digest, { bytes: 7, sha256: sha256('{"v":1}') });
  t.same(await fs.readdir(path.dirname(file)), ['data.json'], 'no temporary file beside it');

  await writeFileAtomic(file, '{"v":2}');
  t.equal(await fs.readFile(file, 'utf8'), '{"v":2}', 'replaced');
  t.same(await fs.readdir(path.dirname(file)), ['data.json']);
});

t.test('a write that fails after its temporary file exists keeps the old file whole and removes the temporary', async (t) => {
  const dir = await tmpDir(t);
  const file = path.join(dir, 'state.bin');
  await writeFileAtomic(file, 'old contents');
  // Not bytes: the temporary file is created, then the write itself throws.
  const bad = { length: 3 } as unknown as Uint8Array;
  await t.rejects(writeFileAtomic(file, bad));
  t.equal(await fs.readFile(file, 'utf8'), 'old contents', 'the old file is untouched');
  t.same(await fs.readdir(dir), ['state.bin'], 'the temporary file is gone');
});

t.test('a rename that fails (the target is a non-empty folder) removes the temporary and leaves the target alone', async (t) => {
  const dir = await tmpDir(t);
  const target = path.join(dir, 'taken');
  await fs.mkdir(target);
  await fs.writeFile(path.join(target, 'inside'), 'x');
  await t.rejects(writeFileAtomic(target, 'new'));
  t.same(await fs.readdir(dir), ['taken']);
  t.same(await fs.readdir(target), ['inside']);

  const tmp = tempPathFor(target);
  await writeFileSynced(tmp, 'streamed', 'wx');
  await t.rejects(commitTempFile(tmp, target));
  t.same(await fs.readdir(dir), ['taken'], 'commitTempFile removes its temporary on failure too');
});

t.test('digests: the returned digest is the bytes written and digestFile agrees on a multi-MiB file', async (t) => {
  const dir = await tmpDir(t);
  const file = path.join(dir, 'big.bin');
  // Larger than digestFile's 1 MiB read so the streamed hash covers several reads and a partial one.
  const data = new Uint8Array(3 * (1 << 20) + 7);
  for (let i = 0; i < data.length; i++) data[i] = (i * 31 + 7) & 0xff;
  const written = await writeFileAtomic(file, data);
  t.same(written, { bytes: data.length, sha256: sha256(data) });
  t.same(await digestFile(file), written);
  t.same(await digestFile(path.join(dir, 'big.bin')), { bytes: (await fs.stat(file)).size, sha256: sha256(await fs.readFile(file)) });

  const text = 'héllo wörld';
  const synced = await writeFileSynced(path.join(dir, 'text.txt'), text);
  t.same(synced, { bytes: Buffer.byteLength(text, 'utf8'), sha256: sha256(Buffer.from(text, 'utf8')) }, 'strings are digested as UTF-8');
});

t.test('exclusive create refuses an existing temporary name', async (t) => {
  const dir = await tmpDir(t);
  const tmp = path.join(dir, 'x.tmp');
  await fs.writeFile(tmp, 'someone else');
  await t.rejects(writeFileSynced(tmp, 'mine', 'wx'), { code: 'EEXIST' });
  t.equal(await fs.readFile(tmp, 'utf8'), 'someone else');
});

t.test('temporary names are beside the target and unique per call', async (t) => {
  const file = path.join(os.tmpdir(), 'some', 'target.json');
  const names = new Set(Array.from({ length: 200 }, () => tempPathFor(file, 'part')));
  t.equal(names.size, 200);
  const misplaced = [...names].filter((n) => path.dirname(n) !== path.dirname(file) || !path.basename(n).startsWith('target.json.part-'));
  t.same(misplaced, [], 'every name is target.json.part-* in the same folder');
});

t.test('concurrent writers: the target is always one writer\'s whole content, never a mix, and no temporary survives', async (t) => {
  const dir = await tmpDir(t);
  const file = path.join(dir, 'contended.bin');
  const size = 256 * 1024;
  const writers = 16;
  await writeFileAtomic(file, filled(size, 0));

  let stop = false;
  const seen = new Set<number>();
  let torn = 0;
  // A reader that loads the file while the writers race: every read must be one whole version.
  const reader = (async () => {
    while (!stop) {
      const buf = await fs.readFile(file);
      if (buf.length !== size || buf.some((b) => b !== buf[0])) torn++;
      else seen.add(buf[0]);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const digests = await Promise.all(Array.from({ length: writers }, (_, i) => writeFileAtomic(file, filled(size, i + 1))));
  stop = true;
  await reader;

  t.equal(torn, 0, 'no read saw a partial or mixed file');
  t.ok([...seen].every((v) => v >= 0 && v <= writers), 'every version read was written by someone');
  const final = await fs.readFile(file);
  t.equal(final.length, size);
  t.ok(final.every((b) => b === final[0]) && final[0] >= 1 && final[0] <= writers, 'the final file is one writer\'s content');
  t.same(await digestFile(file), digests[final[0] - 1], "and matches that writer's digest");
  t.same(await fs.readdir(dir), ['contended.bin'], 'no temporary file left');
});

t.test('fsyncFile and fsyncDir accept existing paths; fsyncFile reports a missing one', async (t) => {
  const dir = await tmpDir(t);
  const file = path.join(dir, 'f');
  await fs.writeFile(file, 'x');
  await fsyncFile(file);
  await fsyncDir(dir);
  await fsyncDir(path.join(dir, 'missing'));
  await t.rejects(fsyncFile(path.join(dir, 'missing')), { code: 'ENOENT' });
});
