/**
 * A snapshot file is read in pieces and hashed while the next piece is read
 * (src/kb/index-snapshot.ts readFileVerified): a file of several pieces comes back byte for byte,
 * and a byte changed in a later piece, a file cut short or one grown longer than the manifest says
 * is refused with a SnapshotFault (the caller rebuilds), never served; an abort is an abort.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { readFileVerified, readManifest, SnapshotFault, SnapshotWriter } from '../../src/kb/index-snapshot.ts';
import { tempDir } from '../helper.ts';

const BYTES = 9 * 1024 * 1024 + 123; // three pieces of 4 MiB, the last one short

async function snapshot(t: Parameters<typeof tempDir>[0]) {
  const dest = path.join(tempDir(t), 'snap');
  const data = randomBytes(BYTES);
  const w = await SnapshotWriter.begin(dest, { durable: false });
  await w.writeFile('lexical.bin', data);
  await w.commit({ kind: 'collection', database_id: null, collection_id: 1, version: 1, key: null, content_sha256: null, chunker_version: null, language: null, analyzer: 'a', embedder: null, dimension: null, hnsw: null, chunks: 0 });
  const read = await readManifest(dest);
  if (!read.ok) throw new Error(read.reason);
  return { dest, data, manifest: read.manifest, file: path.join(dest, 'lexical.bin') };
}

t.test('a file of several pieces comes back whole', async (t) => {
  const { dest, data, manifest } = await snapshot(t);
  const buf = await readFileVerified(dest, manifest, 'lexical.bin');
  t.equal(buf.length, BYTES);
  t.ok(buf.equals(data), 'byte for byte');
});

async function refused(t: Test, p: Promise<unknown>, message: RegExp, label: string) {
  const err = await p.then(() => null, (e: unknown) => e);
  t.ok(err instanceof SnapshotFault, `${label}: a SnapshotFault`);
  t.match((err as Error | null)?.message, message, `${label}: says why`);
}

t.test('damage anywhere is refused', async (t) => {
  for (const [label, message, damage] of [
    ['a byte changed in the third piece', /checksum mismatch/, (f: string) => {
      const fd = fs.openSync(f, 'r+');
      const b = Buffer.alloc(1);
      fs.readSync(fd, b, 0, 1, 8 * 1024 * 1024 + 7);
      b[0] = b[0]! ^ 0xff;
      fs.writeSync(fd, b, 0, 1, 8 * 1024 * 1024 + 7);
      fs.closeSync(fd);
    }],
    ['cut short', /size differs/, (f: string) => fs.truncateSync(f, BYTES - 1)],
    ['grown longer', /size differs/, (f: string) => fs.appendFileSync(f, 'x')],
  ] as const) {
    const { dest, manifest, file } = await snapshot(t);
    damage(file);
    await refused(t, readFileVerified(dest, manifest, 'lexical.bin'), message, label);
  }
  const { dest, manifest, file } = await snapshot(t);
  fs.rmSync(file);
  await refused(t, readFileVerified(dest, manifest, 'lexical.bin'), /missing/, 'a missing file');
});

t.test('an abort between pieces ends the read with the abort', async (t) => {
  const { dest, manifest } = await snapshot(t);
  const controller = new AbortController();
  controller.abort(new Error('stop'));
  const err = await readFileVerified(dest, manifest, 'lexical.bin', controller.signal).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err, 'rejected');
  t.notOk(err instanceof SnapshotFault, 'not taken for a damaged file (no rebuild for an abort)');
  t.match((err as Error).message, /stop|abort/i, 'the abort reason');
});
