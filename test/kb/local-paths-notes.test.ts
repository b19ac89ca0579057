/**
 * Local paths through the REST surface as a user meets them:
 * - a relative path is a 400 VALIDATION_ERROR saying paths must be absolute, naming ALLOWED_DIRS
 *   and an absolute example (not a 404 "does not exist" for a path resolved somewhere unseen);
 * - a folder ingest that leaves out symlinks (to a file or a folder outside ALLOWED_DIRS, or whose
 *   target is missing) records each in the job as a skipped item with a note, visible through
 *   get_job, by the link's own path and never where it points.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, tempDir, testConfig } from '../helper.ts';

function tree(t: Parameters<typeof tempDir>[0]) {
  const base = fs.realpathSync(tempDir(t, 'kb-notes-'));
  const allowed = path.join(base, 'allowed');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(allowed, 'docs'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(allowed, 'docs', 'crane.md'), '# Crane\n\nCrane seven received a new hydraulic hose.\n');
  fs.writeFileSync(path.join(outside, 'secret.md'), '# Secret\n\nNot for the knowledge base.\n');
  fs.symlinkSync(path.join(outside, 'secret.md'), path.join(allowed, 'docs', 'escape.md'));
  fs.symlinkSync(outside, path.join(allowed, 'docs', 'escape-dir'));
  fs.symlinkSync(path.join(outside, 'gone.md'), path.join(allowed, 'docs', 'dangling.md'));
  fs.symlinkSync(path.join(outside, 'gone.tmp'), path.join(allowed, 'docs', 'dangling.tmp'));
  return { allowed, outside };
}

t.test('a relative path: 400 saying paths must be absolute, with ALLOWED_DIRS and an example', async (t) => {
  const { allowed } = tree(t);
  const app = await buildTestApp(t, { config: testConfig(t, { ALLOWED_DIRS: allowed }) });
  for (const given of ['docs/crane.md', './docs', 'docs', '../allowed/docs/crane.md']) {
    const res = await app.inject({ method: 'POST', url: '/v1/collections/notes/documents', payload: { paths: [given] } });
    t.equal(res.statusCode, 400, given);
    const body = res.json();
    t.equal(body.code, 'VALIDATION_ERROR');
    t.match(body.error, `Path ${JSON.stringify(given)} is relative: paths must be absolute and inside ALLOWED_DIRS (${allowed})`);
    t.match(body.error, `e.g. ${JSON.stringify(path.join(allowed, given))}`, 'an absolute example under the allowed folder');
  }
  const missing = await app.inject({ method: 'POST', url: '/v1/collections/notes/documents', payload: { paths: [path.join(allowed, 'docs', 'missing.md')] } });
  t.equal(missing.statusCode, 404, 'an absolute path that does not exist is still NOT_FOUND');
  const absolute = await app.inject({ method: 'POST', url: '/v1/collections/notes/documents', payload: { paths: [path.join(allowed, 'docs', 'crane.md')], wait_seconds: 60 } });
  t.equal(absolute.statusCode, 202);
  t.equal(absolute.json().items[0].stage, 'done', 'the same file by its absolute path is ingested');
});

t.test('symlinks left out by a folder walk are items with notes in get_job', async (t) => {
  const { allowed, outside } = tree(t);
  const app = await buildTestApp(t, { config: testConfig(t, { ALLOWED_DIRS: allowed }) });
  const res = await app.inject({ method: 'POST', url: '/v1/collections/notes/documents', payload: { paths: [allowed], exclude: ['**/*.tmp'], wait_seconds: 60 } });
  t.equal(res.statusCode, 202);
  const job = (await app.inject(`/v1/jobs/${res.json().id}`)).json();
  t.equal(job.status, 'succeeded');
  const bySource = new Map<string, { stage: string; note: string | null }>(job.items.map((i: { source: string; stage: string; note: string | null }) => [i.source, i]));
  t.equal(bySource.get(path.join(allowed, 'docs', 'crane.md'))?.stage, 'done', 'the real file is ingested');
  for (const link of ['escape.md', 'escape-dir']) {
    const item = bySource.get(path.join(allowed, 'docs', link));
    t.match(item, { stage: 'skipped', note: 'left out: a symlink that leads outside the allowed folders; not followed' }, `${link}: noted`);
  }
  t.match(
    bySource.get(path.join(allowed, 'docs', 'dangling.md')),
    { stage: 'skipped', note: 'left out: a symlink whose target does not exist or cannot be read; not followed' },
    'a dangling link is noted too',
  );
  t.notOk(bySource.has(path.join(allowed, 'docs', 'dangling.tmp')), 'a link the exclude glob leaves out is not reported');
  t.equal(job.counts.skipped, 3);
  t.notMatch(JSON.stringify(job), outside, 'no note says where a link points');
  t.match(res.json().hint, /skipped \(unchanged or left out: see each item's note\)/, "the ingest answer's hint points at the notes");
});
