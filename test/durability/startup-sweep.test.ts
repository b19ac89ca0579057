/**
 * At start-up the server removes every temp file and folder a killed process left in DATA_DIR,
 * whatever its age, puts back an index version that was moved aside, and touches nothing that is
 * not its own or that belongs to a live process.
 */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp, testConfig } from '../helper.ts';
import { sweepDataDirTemp, leftoverOwner } from '../../src/util/temp-sweep.ts';
import { deadPid } from '../dead-pid.ts';


const write = (file: string, text = 'x') => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

t.test('the app sweeps DATA_DIR when it starts', async (t) => {
  const config = testConfig(t);
  const data = config.dataDir;
  const dead = deadPid();
  const ix = path.join(data, 'indexes');
  // Leftovers of a killed process, all fresh (younger than any age rule).
  write(path.join(ix, `.tmp-p${dead}-doc1-0123456789ab`, 'chunks.json'));
  write(path.join(ix, `.trash-p${dead}-doc2-0123456789ab`, 'manifest.json'));
  write(path.join(ix, `.tmp-legacy-0123456789ab`, 'chunks.json')); // format 1 names carry no pid
  write(path.join(ix, `.old-p${dead}-kept-0123456789ab`, 'manifest.json'), 'old'); // its replacement arrived
  write(path.join(ix, 'kept', 'manifest.json'), 'new');
  write(path.join(ix, `.old-p${dead}-orphan-0123456789ab`, 'manifest.json'), 'only copy'); // killed between the renames
  write(path.join(data, 'tmp', 'ocr', `eng.traineddata.${dead}.1764590000000.tmp`));
  write(path.join(data, 'tmp', 'work', `upload.p${dead}.00ff.tmp`));
  write(path.join(data, `.probe-${dead}-0a0b0c0d`));
  // Not ours to remove.
  write(path.join(ix, `.tmp-p${process.ppid}-busy-0123456789ab`, 'chunks.json')); // a live worker's save
  write(path.join(data, 'tmp', 'ocr', 'eng.traineddata'), 'model');
  write(path.join(data, 'tmp', 'notes.txt'));
  write(path.join(data, 'models', `weights.p${dead}.00ff.tmp`)); // only DATA_DIR/tmp and the probe files are swept
  const outside = path.join(path.dirname(data), `outside.p${dead}.00ff.tmp`);
  write(outside);
  t.teardown(() => fs.rmSync(outside, { force: true }));
  fs.symlinkSync(path.dirname(outside), path.join(data, 'tmp', 'link'));

  const app = await buildTestApp(t, { config });
  await app.services.swept;

  t.same(fs.readdirSync(ix).sort(), [`.tmp-p${process.ppid}-busy-0123456789ab`, 'kept', 'orphan'].sort());
  t.equal(fs.readFileSync(path.join(ix, 'kept', 'manifest.json'), 'utf8'), 'new', 'the newer version stays');
  t.equal(fs.readFileSync(path.join(ix, 'orphan', 'manifest.json'), 'utf8'), 'only copy', 'the moved-aside version is back');
  t.same(fs.readdirSync(path.join(data, 'tmp', 'ocr')), ['eng.traineddata']);
  t.same(fs.readdirSync(path.join(data, 'tmp', 'work')), []);
  t.notOk(fs.existsSync(path.join(data, `.probe-${dead}-0a0b0c0d`)), 'a dead probe file is gone');
  t.ok(fs.existsSync(path.join(data, 'tmp', 'notes.txt')), 'files not named by us stay');
  t.ok(fs.existsSync(path.join(data, 'models', `weights.p${dead}.00ff.tmp`)), 'outside DATA_DIR/tmp nothing is swept');
  t.ok(fs.existsSync(outside), 'a symlink out of DATA_DIR is not followed');
});

t.test('leftoverOwner: dead pids, our own earlier life, live pids and their grace period', async (t) => {
  const now = Date.now();
  t.equal(leftoverOwner(null, now), 'dead', 'no pid (legacy name)');
  t.equal(leftoverOwner(deadPid(), now), 'dead');
  t.equal(leftoverOwner(process.ppid, now), 'live');
  t.equal(leftoverOwner(process.ppid, now - 2 * 3600_000, now), 'dead', 'a live pid older than an hour was reused');
  t.equal(leftoverOwner(process.pid, performance.timeOrigin - 1000), 'dead', 'our pid before we started: a previous process');
  t.equal(leftoverOwner(process.pid, Date.now()), 'live', 'our own writes in progress');
});

t.test('a missing or unreadable DATA_DIR/tmp is no error', async (t) => {
  t.same(await sweepDataDirTemp(path.join(testConfig(t).dataDir, 'does-not-exist')), { removed: 0 });
});
