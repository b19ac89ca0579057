/**
 * The include/exclude glob matcher (src/kb/glob-match.ts): the same answers as picomatch
 * ({dot: true, strictBrackets: true}, kept as a devDependency for this reference only) on a
 * generated set of globs x paths where picomatch is sound, the features the walk relies on, the
 * places where picomatch itself is wrong and we are not, the compile limits (400 naming the limit),
 * and the hostile globs of issue 19 answered correctly (they took seconds to forever before).
 */
import picomatch from 'picomatch';
import t from 'tap';
import { compileGlob, GlobError, MAX_BRACE_ALTERNATIVES, MAX_GLOB_CHARS, MAX_GLOB_WILDCARDS } from '../../src/kb/glob-match.ts';
import { compileGlobs } from '../../src/kb/local-files.ts';

/** A small deterministic generator (LCG): the same set on every run. */
function rng(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

/** Whether picomatch's RegExp for `g` has a `.` that is not escaped (other than its own `(?=.)`). */
function unescapedDot(g: string): boolean {
  const source = picomatch.makeRe(g, { dot: true, strictBrackets: true }).source.replaceAll('(?=.)', ''); // its own lookahead; its globstar's `(?:…).` is kept out below by the `)`
  return /(^|[^\\)])\./.test(source);
}

t.test('same answers as picomatch on generated globs x paths', async (t) => {
  const r = rng(19);
  // `[!x]` is left out, and so are globs whose literal `.` picomatch leaves unescaped in its RegExp
  // (before `?`, after a class or a range): picomatch gets those wrong (see the next test).
  const atoms = ['a', 'b', '.', 'x', '*', '?', '[ab]', '[^a]', '[a-c]', '{a,b}', '{x,a/b}', '{1..3}', '.md', '-', '_', '[[:digit:]]', '1', '\\*', '!'];
  const globs: string[] = [];
  while (globs.length < 2000) {
    // 1-3 segments, a quarter of them `**` (picomatch reads a `**` inside a segment as `*`, as we do; noise here).
    const segs: string[] = [];
    for (let n = 1 + r(3); n > 0; n--) {
      if (r(4) === 0) segs.push('**');
      else {
        let seg = '';
        for (let k = 1 + r(3); k > 0; k--) seg += atoms[r(atoms.length)];
        segs.push(seg);
      }
    }
    const g = segs.join('/');
    // Relative globs as the tool takes them (a leading `!` negates: tested below).
    if (g.startsWith('!') || g.includes('**/**') || /[^/]\*\*|\*\*[^/]/.test(g.replace(/\\\*/g, '')) || unescapedDot(g)) continue;
    globs.push(g);
  }
  const pathAtoms = ['a', 'b', 'x', '.', 'md', '/', '1', '2', '-', '_', '*', 'ab', '!'];
  const paths: string[] = [];
  while (paths.length < 300) {
    let p = '';
    for (let k = 1 + r(7); k > 0; k--) p += pathAtoms[r(pathAtoms.length)];
    if (p.startsWith('/') || p.endsWith('/') || p.includes('//') || p.split('/').some((s) => s === '.' || s === '..')) continue;
    paths.push(p);
  }
  t.ok(globs.filter((g) => g.includes('**')).length > 500, 'globstars are well represented');
  let checks = 0;
  const diffs: string[] = [];
  for (const g of globs) {
    const ref = picomatch(g, { dot: true, strictBrackets: true });
    const ours = compileGlob(g);
    for (const p of paths) {
      checks++;
      if (ref(p) !== ours(p) && diffs.length < 10) diffs.push(`${JSON.stringify(g)} on ${JSON.stringify(p)}: picomatch ${ref(p)}`);
    }
  }
  t.equal(checks, 600_000);
  t.same(diffs, [], 'no glob x path where the answers differ');
});

t.test('the features the walk relies on', async (t) => {
  const cases: Array<[string, string, boolean]> = [
    ['**/*.md', 'x.md', true],
    ['**/*.md', 'a/.b/x.md', true],
    ['**/*.md', 'a/b/x.txt', false],
    ['*.md', 'a/x.md', false],
    ['*', '.hidden', true],
    ['a/**', 'a', true],
    ['a/**', 'a/', true],
    ['a/**', 'a/b/c', true],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['drafts/**', 'drafts/', true],
    ['docs/', 'docs/', true],
    ['docs/', 'docs', false],
    ['docs', 'docs/', false],
    ['a/**/', 'a/x/', true],
    ['?', '/', false],
    ['a?c', 'a/c', false],
    ['[a-c]x', 'bx', true],
    ['[^a]x', 'bx', true],
    ['[!a]x', 'bx', true],
    ['[!a]x', 'ax', false],
    ['[!a]', '/', false],
    ['[]a]', ']', true],
    ['[[:alpha:]][[:digit:]]', 'q7', true],
    ['*.{md,txt}', 'x.txt', true],
    ['{a,{b,c}}/x', 'c/x', true],
    ['{a,}x', 'x', true],
    ['f{1..3}', 'f2', true],
    ['f{1..3}', 'f4', false],
    ['f{c..a}', 'fb', true],
    ['{a}', '{a}', true],
    ['{a}', 'a', false],
    ['\\*', '*', true],
    ['\\*', 'x', false],
    ['a\\', 'a\\', true],
    ['./a', 'a', true],
    ['!*.md', 'a.txt', true],
    ['!*.md', 'a.md', false],
    ['report (1).pdf', 'report (1).pdf', true],
    ['a|b', 'a|b', true],
    ['*?*?*?*?*?*?*?*?*?*?*?*?*?*?#', `${'a'.repeat(250)}.txt`, false],
    ['*?*?*?*?*?*?*?*?*?*?*?*?*?*?#', `${'a'.repeat(250)}#`, true],
    ['*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(3000), false],
  ];
  for (const [g, p, want] of cases) t.equal(compileGlob(g)(p), want, `${JSON.stringify(g)} on ${JSON.stringify(p.length > 40 ? `${p.slice(0, 20)}…(${p.length})` : p)}`);
});

t.test('where picomatch is wrong, we follow the shell', async (t) => {
  const pm = (g: string) => picomatch(g, { dot: true, strictBrackets: true });
  // picomatch reads `[!a]` as "[!a]" or one of "!" and "a"; a shell (and we) as "not a".
  t.equal(pm('[!a]')('b'), false);
  t.equal(compileGlob('[!a]')('b'), true);
  t.equal(compileGlob('[!a]')('a'), false);
  // picomatch leaves some `.` unescaped in its RegExp (any character): before `?` and a class, after a range.
  t.equal(pm('x.?[[:digit:]]')('xx-1'), true);
  t.equal(compileGlob('x.?[[:digit:]]')('xx-1'), false);
  t.equal(compileGlob('x.?[[:digit:]]')('x.-1'), true);
  t.equal(pm('{1..3}1.')('11!'), true);
  t.equal(compileGlob('{1..3}1.')('11!'), false);
  t.equal(compileGlob('{1..3}1.')('11.'), true);
});

t.test('malformed globs and globs past a limit are refused, naming the limit', async (t) => {
  const refused = (g: string) => {
    try {
      compileGlobs([g], 'include');
      return null;
    } catch (err) {
      return err as { code: string; message: string };
    }
  };
  for (const bad of ['[a-', '{a,b', '../*.md', '/etc/*', '', '!../x', '*(a|b)', '!(x)', '+(a)', '@(a)', '?(a)', 'a[/]b']) {
    const err = refused(bad);
    t.equal(err?.code, 'VALIDATION_ERROR', `${JSON.stringify(bad)} refused`);
  }
  t.match(refused('*(a|b)')?.message, /extglob/);
  const long = refused('a'.repeat(MAX_GLOB_CHARS + 1));
  t.match(long?.message, new RegExp(`longer than ${MAX_GLOB_CHARS} characters`));
  const wild = refused('*x'.repeat(MAX_GLOB_WILDCARDS + 1));
  t.match(wild?.message, new RegExp(`more than the ${MAX_GLOB_WILDCARDS} allowed`));
  t.equal(refused('*x'.repeat(MAX_GLOB_WILDCARDS)), null, `${MAX_GLOB_WILDCARDS} wildcards are fine`);
  const braces = refused('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}');
  t.match(braces?.message, new RegExp(`more than ${MAX_BRACE_ALTERNATIVES} alternatives`));
  t.match(refused('f{1..1000}')?.message, /alternatives/);
  t.equal(refused('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}'), null, '64 alternatives are fine');
  t.throws(() => compileGlob('[[:nope:]]'), GlobError);
  t.throws(() => compileGlobs(Array.from({ length: 65 }, () => '*'), 'exclude'), { code: 'VALIDATION_ERROR' });
});
