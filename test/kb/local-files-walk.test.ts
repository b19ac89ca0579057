/**
 * Folder walks through ingest_documents (REST, app.inject): the hostile glob of issue 19 answers
 * (it hung the server before) while /health keeps answering during a long walk; what a walk
 * leaves out is reported as skipped items with the reason (folders past MAX_WALK_DEPTH, symlinks
 * that lead outside, by their own name only); a file whose name is not UTF-8 is ingested; and a
 * walk stops on its request's signal or past its time budget.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, tempDir } from '../helper.ts';
import { jobEnded } from './surface-fixtures.ts';
import { toolError } from '../../src/errors.ts';
import { MAX_WALK_DEPTH, resolveLocalPaths, selectLocalPaths } from '../../src/kb/local-files.ts';

const HOSTILE = '*?*?*?*?*?*?*?*?*?*?*?*?*?*?#';

async function kbApp(t: Parameters<typeof tempDir>[0], allowed: string) {
  return buildTestApp(t, { env: { ALLOWED_DIRS: allowed, MODEL_DOWNLOADS: 'never', MODELS_DIR: tempDir(t, 'kb-no-models-') } });
}

function folder(t: Parameters<typeof tempDir>[0]) {
  const base = fs.realpathSync(tempDir(t, 'kb-walk-'));
  const allowed = path.join(base, 'allowed');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(allowed);
  fs.mkdirSync(outside);
  return { allowed, outside };
}

t.test('the hostile glob answers at once and /health answers during a long walk', async (t) => {
  const { allowed } = folder(t);
  const three = path.join(allowed, 'three');
  fs.mkdirSync(three);
  for (const n of ['a', 'b', 'c']) fs.writeFileSync(path.join(three, `${n.repeat(200)}.txt`), 'x');
  const app = await kbApp(t, allowed);

  const res = await app.inject({ method: 'POST', url: '/v1/collections/hostile/documents', payload: { paths: [three], include: [HOSTILE] } });
  t.equal(res.statusCode, 400, res.body);
  t.equal(res.json().code, 'VALIDATION_ERROR');
  t.match(res.json().error, /name no files/);

  // 200 folders of 20 long names: the walk takes many turns of the event loop.
  const many = path.join(allowed, 'many');
  for (let d = 0; d < 200; d++) {
    const sub = path.join(many, `d${String(d).padStart(3, '0')}`);
    fs.mkdirSync(sub, { recursive: true });
    for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(sub, `${'n'.repeat(180)}${i}.txt`), '');
  }
  let ingestAnswered = false;
  const ingest = app
    .inject({ method: 'POST', url: '/v1/collections/hostile/documents', payload: { paths: [many], include: [HOSTILE] } })
    .then((r) => {
      ingestAnswered = true;
      return r;
    });
  const health = await app.inject('/health');
  t.equal(health.statusCode, 200);
  t.notOk(ingestAnswered, '/health answered while the walk was still running');
  const walked = await ingest;
  t.equal(walked.statusCode, 400, walked.body);
  t.match(walked.json().error, /name no files/);
});

t.test('folders too deep and symlinks leading outside are reported as skipped items', async (t) => {
  const { allowed, outside } = folder(t);
  const root = path.join(allowed, 'tree');
  fs.mkdirSync(root);
  fs.writeFileSync(path.join(root, 'top.txt'), 'shallow otters');
  let deep = root;
  for (let i = 0; i <= MAX_WALK_DEPTH; i++) deep = path.join(deep, `l${i}`);
  fs.mkdirSync(deep, { recursive: true });
  fs.writeFileSync(path.join(deep, 'bottom.txt'), 'deep otters');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  for (let i = 0; i < 12; i++) fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, `link${String(i).padStart(2, '0')}.txt`));

  const app = await kbApp(t, allowed);
  const res = await app.inject({ method: 'POST', url: '/v1/collections/notes/documents', payload: { paths: [root] } });
  t.equal(res.statusCode, 202, res.body);
  const job = await jobEnded(app, res.json().id);
  t.equal(job.status, 'succeeded');
  const done = job.items.filter((i: { stage: string }) => i.stage === 'done');
  t.same(done.map((i: { source: string }) => path.basename(i.source)), ['top.txt']);

  const skipped = job.items.filter((i: { stage: string }) => i.stage === 'skipped');
  const tooDeep = skipped.filter((i: { note: string }) => /MAX_WALK_DEPTH/.test(i.note));
  t.equal(tooDeep.length, 1, 'the folder past the depth limit is named');
  t.equal(path.relative(root, tooDeep[0].source).split(path.sep).length, MAX_WALK_DEPTH + 1);
  const links = skipped.filter((i: { note: string }) => /symlink that leads outside/.test(i.note));
  t.equal(links.length, 10, 'the first ten links are listed');
  t.match(links.at(-1).note, /2 more like it not listed/, 'the count of the rest');
  t.same(links.map((i: { source: string }) => path.basename(i.source)), Array.from({ length: 10 }, (_, i) => `link${String(i).padStart(2, '0')}.txt`));
  t.notOk(JSON.stringify(job).includes(outside), 'where the links point is never shown');
  t.equal(job.counts.skipped, 11);
});

t.test('a file whose name is not UTF-8 is ingested and searchable', async (t) => {
  const { allowed } = folder(t);
  const dir = path.join(allowed, 'latin1');
  fs.mkdirSync(dir);
  // "caf\xe9.txt" in Latin-1: not valid UTF-8.
  const name = Buffer.concat([Buffer.from(dir + path.sep), Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from('.txt')]);
  fs.writeFileSync(name, 'Espresso crema forms from emulsified coffee oils.');
  fs.writeFileSync(path.join(dir, 'plain.txt'), 'Plain tea leaves.');

  const app = await kbApp(t, allowed);
  const res = await app.inject({ method: 'POST', url: '/v1/collections/latin/documents', payload: { paths: [dir] } });
  t.equal(res.statusCode, 202, res.body);
  const job = await jobEnded(app, res.json().id);
  t.equal(job.status, 'succeeded', JSON.stringify(job.items.map((i: { error: unknown }) => i.error)));
  t.equal(job.counts.done, 2);
  t.ok(job.items.some((i: { source: string }) => i.source.endsWith('caf\uFFFD.txt')), 'shown with U+FFFD');
  const hits = await app.inject({ method: 'POST', url: '/v1/collections/latin/search', payload: { query: 'espresso crema', mode: 'lexical' } });
  t.equal(hits.statusCode, 200, hits.body);
  t.match(hits.json().results[0]?.text, /Espresso crema/);
});

t.test('a walk stops on its signal and past its budget', async (t) => {
  const { allowed } = folder(t);
  fs.writeFileSync(path.join(allowed, 'a.txt'), 'a');
  const opts = { allowed: { dirs: [allowed], origin: 'ALLOWED_DIRS' }, maxBytes: 1024 };
  const gone = new AbortController();
  gone.abort(toolError('SHUTTING_DOWN', 'the server is stopping'));
  await t.rejects(resolveLocalPaths([allowed], { ...opts, signal: gone.signal }), { code: 'SHUTTING_DOWN' }, 'the reason of a coded abort');
  const plain = new AbortController();
  plain.abort();
  await t.rejects(resolveLocalPaths([allowed], { ...opts, signal: plain.signal }), { code: 'TIMEOUT', message: /stopped while its folders were being walked/ });
  const late = await selectLocalPaths([allowed], { ...opts, budgetMs: -1 }).catch((e) => e);
  t.equal(late.code, 'TIMEOUT');
  t.match(late.message, /Walking the folders took longer than/);
  t.same((await selectLocalPaths([allowed], opts)).files.map((f) => f.relative), ['a.txt']);
});
