/**
 * Local files for ingestion: realpath confinement to the allowed folders (no `..`, no symlink
 * escape, symlinks inside to inside followed), only regular files (a FIFO is refused or left out),
 * folders walked with include/exclude globs, symlink loops walked once, the size limit, and the
 * messages (they name ALLOWED_DIRS, never where an escaping symlink points).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helper.ts';
import { loadConfig } from '../../src/config.ts';
import { readLocalFile, realFolders, resolveLocalPaths, type AllowedFolders } from '../../src/kb/local-files.ts';

function tree(t: Parameters<typeof tempDir>[0]) {
  const base = fs.realpathSync(tempDir(t, 'kb-local-'));
  const allowed = path.join(base, 'allowed');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(allowed, 'docs', 'deep'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(allowed, 'a.md'), '# A\nalpha');
  fs.writeFileSync(path.join(allowed, 'docs', 'b.txt'), 'beta');
  fs.writeFileSync(path.join(allowed, 'docs', 'c.pdf'), '%PDF-1.4');
  fs.writeFileSync(path.join(allowed, 'docs', 'deep', 'd.md'), 'delta');
  fs.writeFileSync(path.join(allowed, 'docs', '.hidden.md'), 'hidden');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(allowed, 'escape.txt'));
  fs.symlinkSync(outside, path.join(allowed, 'escape-dir'));
  fs.symlinkSync(path.join(allowed, 'a.md'), path.join(allowed, 'docs', 'link-to-a.md'));
  fs.symlinkSync(allowed, path.join(allowed, 'docs', 'loop'));
  execFileSync('mkfifo', [path.join(allowed, 'pipe')]);
  return { base, allowed, outside, folders: { dirs: [allowed], origin: 'ALLOWED_DIRS' } as AllowedFolders };
}

const MAX = 1024 * 1024;

t.test('files and folders inside resolve to real paths; symlink loops are walked once', async (t) => {
  const { allowed, folders } = tree(t);
  const one = await resolveLocalPaths([path.join(allowed, 'a.md')], { allowed: folders, maxBytes: MAX });
  t.same(one.map((f) => f.realpath), [path.join(allowed, 'a.md')]);
  t.equal(one[0]!.bytes, 9);

  const rel = await resolveLocalPaths(['docs/b.txt'], { allowed: folders, maxBytes: MAX }).catch((e) => e);
  t.match(rel, { code: 'VALIDATION_ERROR', message: /is relative: paths must be absolute/ }, 'relative paths are refused (local-paths-relative.test.ts)');

  const all = await resolveLocalPaths([allowed], { allowed: folders, maxBytes: MAX });
  const names = all.map((f) => path.relative(allowed, f.realpath)).sort();
  // escape.txt / escape-dir point outside: left out; pipe: not a regular file; loop: the root again.
  t.same(names, ['a.md', 'docs/.hidden.md', 'docs/b.txt', 'docs/c.pdf', 'docs/deep/d.md']);
  t.ok(all.every((f) => !f.realpath.includes('outside')), 'nothing outside the allowed folder');
});

t.test('include/exclude globs are relative to the folder given', async (t) => {
  const { allowed, folders } = tree(t);
  const md = await resolveLocalPaths([path.join(allowed, 'docs')], { allowed: folders, include: ['**/*.md'], maxBytes: MAX });
  t.same(md.map((f) => f.relative).sort(), ['.hidden.md', 'deep/d.md', 'link-to-a.md'], 'a symlink inside -> inside is followed');
  const noDeep = await resolveLocalPaths([path.join(allowed, 'docs')], { allowed: folders, exclude: ['deep/**', '**/.*'], maxBytes: MAX });
  t.same(noDeep.map((f) => f.relative).sort(), ['b.txt', 'c.pdf', 'link-to-a.md']);
  const excludedFolder = await resolveLocalPaths([allowed], { allowed: folders, exclude: ['docs'], maxBytes: MAX });
  t.same(excludedFolder.map((f) => f.relative), ['a.md'], 'an excluded folder is not walked');

  for (const bad of ['[a-', '{a,b', '../*.md', '/etc/*', '']) {
    await t.rejects(resolveLocalPaths([allowed], { allowed: folders, include: [bad], maxBytes: MAX }), { code: 'VALIDATION_ERROR' }, `bad glob ${JSON.stringify(bad)}`);
  }
});

t.test('escapes are refused with URL_NOT_ALLOWED naming ALLOWED_DIRS, not the target', async (t) => {
  const { allowed, outside, folders } = tree(t);
  const cases = [
    path.join(allowed, '..', 'outside', 'secret.txt'),
    `${allowed}/docs/../../outside/secret.txt`,
    path.join(allowed, 'escape.txt'),
    path.join(allowed, 'escape-dir'),
    path.join(allowed, 'escape-dir', 'secret.txt'),
    '/etc/passwd',
  ];
  for (const p of cases) {
    const err = await resolveLocalPaths([p], { allowed: folders, maxBytes: MAX }).then(
      () => null,
      (e: { code: string; message: string }) => e,
    );
    t.equal(err?.code, 'URL_NOT_ALLOWED', `${p} refused`);
    t.match(err?.message, /ALLOWED_DIRS/);
    if (p.includes('escape')) t.notOk(err?.message.includes(outside), 'the symlink target is not echoed');
  }
  // Relative, so refused before any lookup (and without reaching outside).
  await t.rejects(resolveLocalPaths(['../outside/secret.txt'], { allowed: folders, maxBytes: MAX }), { code: 'VALIDATION_ERROR', message: /is relative/ });
  const fifo = await resolveLocalPaths([path.join(allowed, 'pipe')], { allowed: folders, maxBytes: MAX }).catch((e) => e);
  t.equal(fifo.code, 'URL_NOT_ALLOWED', 'a FIFO is refused');
  t.match(fifo.message, /not a regular file/);
  await t.rejects(readLocalFile(path.join(allowed, 'pipe'), [allowed], 'ALLOWED_DIRS', MAX), { code: 'URL_NOT_ALLOWED' }, 'reading a FIFO is refused without blocking');
  await t.rejects(readLocalFile(path.join(allowed, 'escape.txt'), [allowed], 'ALLOWED_DIRS', MAX), { code: 'URL_NOT_ALLOWED' }, 'reading through an escaping symlink is refused');
  t.equal((await readLocalFile(path.join(allowed, 'a.md'), [allowed], 'ALLOWED_DIRS', MAX)).toString(), '# A\nalpha');
  await t.rejects(resolveLocalPaths([path.join(allowed, 'missing.md')], { allowed: folders, maxBytes: MAX }), { code: 'NOT_FOUND' });
});

t.test('local files off, size limit, roots as folders, file limit', async (t) => {
  const { allowed } = tree(t);
  const off = await resolveLocalPaths([path.join(allowed, 'a.md')], { allowed: { dirs: [], origin: 'ALLOWED_DIRS' }, maxBytes: MAX }).catch((e) => e);
  t.equal(off.code, 'URL_NOT_ALLOWED');
  t.match(off.message, /Local files are off: set ALLOWED_DIRS/);

  await t.rejects(resolveLocalPaths([path.join(allowed, 'a.md')], { allowed: { dirs: [allowed], origin: 'ALLOWED_DIRS' }, maxBytes: 4 }), { code: 'PAYLOAD_TOO_LARGE' });
  await t.rejects(resolveLocalPaths([allowed], { allowed: { dirs: [allowed], origin: 'ALLOWED_DIRS' }, maxBytes: MAX, maxFiles: 2 }), { code: 'VALIDATION_ERROR' });

  const roots = await realFolders([`file://${allowed}`, '/does/not/exist', 'relative']);
  t.same(roots, [allowed], 'MCP roots: file:// URIs resolved, missing and relative ones left out');
});

t.test('ALLOWED_DIRS: realpath at start-up, a missing folder is a start-up error naming it', async (t) => {
  const { base, allowed } = tree(t);
  fs.symlinkSync(allowed, path.join(base, 'alias'));
  const c = loadConfig({ ALLOWED_DIRS: `${path.join(base, 'alias')}, ${allowed}` });
  t.same(c.allowedDirs, [allowed], 'symlinked folder resolved and deduplicated');
  t.same(loadConfig({}).allowedDirs, [], 'default: off');
  t.throws(() => loadConfig({ ALLOWED_DIRS: '/no/such/folder' }), /ALLOWED_DIRS names a folder that does not exist: "\/no\/such\/folder"/);
  t.throws(() => loadConfig({ ALLOWED_DIRS: 'relative/dir' }), /ALLOWED_DIRS must list absolute folders/);
  t.throws(() => loadConfig({ ALLOWED_DIRS: path.join(allowed, 'a.md') }), /not a folder/);
});
