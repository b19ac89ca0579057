/**
 * Include/exclude globs compiled to a small NFA and matched by simulating the set of its states,
 * so a match costs O(states x path length) whatever the glob: no backtracking, no RegExp. (A
 * backtracking matcher takes exponential time on globs like `*?*?*?*?...#`; this one does not.)
 *
 * Syntax, as picomatch with {dot: true, strictBrackets: true} reads it: `*` (any run of
 * characters but `/`), `?` (one, not `/`), `**` as a whole segment (any number of folders:
 * `a/**` also matches `a` itself), `[abc]`, `[a-z]`, `[!x]`/`[^x]`, `[[:alpha:]]`-style classes,
 * `{a,b}` alternatives (nested) and `{1..5}`/`{a..e}` ranges, `\` escapes, a leading `!` negates,
 * a leading `./` is dropped; dot files are matched like any other. A trailing `/` matches folders
 * only (the walk tests a folder as `name/`). Extglobs (`*(…)`, `!(…)`, …) are refused rather than
 * read differently from picomatch; parentheses and `|` are otherwise literal.
 *
 * Compiling is bounded too (length, wildcards, brace alternatives, states); beyond a limit the
 * glob is refused with a message naming the limit.
 */

/** Characters in one glob. */
export const MAX_GLOB_CHARS = 256;
/** Wildcards (`*` runs, `?`, `[…]` classes) in one glob, as written. */
export const MAX_GLOB_WILDCARDS = 32;
/** Alternatives one glob's braces expand to, all groups multiplied. */
export const MAX_BRACE_ALTERNATIVES = 64;
/** NFA states one glob compiles to (after brace expansion): bounds the cost of one match per character. */
export const MAX_GLOB_STATES = 4_096;

export class GlobError extends Error {
  override name = 'GlobError';
}

const SLASH = 0x2f;

// State kinds. A consuming state tests one character and moves to `out`; a hub only links.
const HUB = 0;
const CHAR = 1;
const NOT_SLASH = 2;
const ANY = 3;
const CLASS = 4;
const ACCEPT = 5;

interface CharClass {
  negated: boolean;
  /** Inclusive [lo, hi] UTF-16 code unit ranges. */
  ranges: number[];
}

class Nfa {
  readonly kind: number[] = [];
  readonly arg: number[] = [];
  readonly out: number[] = [];
  readonly eps: number[][] = [];
  readonly classes: CharClass[] = [];

  add(kind: number, arg = 0, out = -1): number {
    if (this.kind.length >= MAX_GLOB_STATES) {
      throw new GlobError(`compiles to more than ${MAX_GLOB_STATES} states (after brace expansion); simplify it or split it into several globs`);
    }
    this.kind.push(kind);
    this.arg.push(arg);
    this.out.push(out);
    this.eps.push([]);
    return this.kind.length - 1;
  }

  link(from: number, to: number): void {
    this.eps[from]!.push(to);
  }
}

type Element = { t: 'char'; c: number } | { t: 'any' } | { t: 'class'; cls: CharClass } | { t: 'star' };

const POSIX: Record<string, Array<[number, number]>> = {
  alpha: [[65, 90], [97, 122]],
  digit: [[48, 57]],
  alnum: [[48, 57], [65, 90], [97, 122]],
  upper: [[65, 90]],
  lower: [[97, 122]],
  space: [[9, 13], [32, 32]],
  blank: [[9, 9], [32, 32]],
  xdigit: [[48, 57], [65, 70], [97, 102]],
  word: [[48, 57], [65, 90], [95, 95], [97, 122]],
  punct: [[33, 47], [58, 64], [91, 96], [123, 126]],
  cntrl: [[0, 31], [127, 127]],
  print: [[32, 126]],
  graph: [[33, 126]],
};

function unclosedClass(): GlobError {
  return new GlobError('has a "[" that is not closed (write "\\[" for a literal one)');
}

/** The index just past the `]` closing the class opened at `open`, or -1 when it is not closed. */
function classEnd(s: string, open: number): number {
  let j = open + 1;
  if (s[j] === '!' || s[j] === '^') j++;
  if (s[j] === ']') j++; // a `]` first is a member
  while (j < s.length) {
    const ch = s[j]!;
    if (ch === '\\') j += 2;
    else if (ch === '[' && s[j + 1] === ':') {
      const close = s.indexOf(':]', j + 2);
      j = close < 0 ? j + 1 : close + 2;
    } else if (ch === ']') return j + 1;
    else j++;
  }
  return -1;
}

function parseClass(s: string, open: number, end: number): CharClass {
  let j = open + 1;
  let negated = false;
  if (s[j] === '!' || s[j] === '^') {
    negated = true;
    j++;
  }
  const ranges: number[] = [];
  const last = end - 1; // the closing `]`
  while (j < last) {
    let lo: number;
    if (s[j] === '[' && s[j + 1] === ':') {
      const close = s.indexOf(':]', j + 2);
      if (close > 0 && close < last) {
        const name = s.slice(j + 2, close);
        const set = POSIX[name];
        if (!set) throw new GlobError(`unknown character class [:${name}:]`);
        for (const [a, b] of set) ranges.push(a, b);
        j = close + 2;
        continue;
      }
    }
    if (s[j] === '\\' && j + 1 < last) {
      lo = s.charCodeAt(j + 1);
      j += 2;
    } else {
      lo = s.charCodeAt(j);
      j++;
    }
    if (s[j] === '-' && j + 1 < last) {
      let hi: number;
      if (s[j + 1] === '\\' && j + 2 < last) {
        hi = s.charCodeAt(j + 2);
        j += 3;
      } else {
        hi = s.charCodeAt(j + 1);
        j += 2;
      }
      // A reversed range matches nothing (as picomatch's); `/` is never matched below.
      if (lo <= hi) ranges.push(lo, hi);
      continue;
    }
    ranges.push(lo, lo);
  }
  return { negated, ranges };
}

function classMatches(cls: CharClass, c: number): boolean {
  if (c === SLASH) return false;
  let hit = false;
  for (let i = 0; i < cls.ranges.length; i += 2) {
    if (c >= cls.ranges[i]! && c <= cls.ranges[i + 1]!) {
      hit = true;
      break;
    }
  }
  return hit !== cls.negated;
}

/** Counts wildcards and refuses extglobs, on the glob as written (escapes and classes respected). */
function scanRaw(s: string): number {
  let wildcards = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '[') {
      const end = classEnd(s, i);
      if (end < 0) throw unclosedClass();
      wildcards++;
      i = end - 1;
      continue;
    }
    if ('*?+@!'.includes(ch) && s[i + 1] === '(') {
      throw new GlobError(`uses an extglob "${ch}(…)", which is not supported (write "\\(" for a literal parenthesis; use exclude to leave files out)`);
    }
    if (ch === '*') {
      wildcards++;
      while (s[i + 1] === '*') i++;
    } else if (ch === '?') wildcards++;
  }
  return wildcards;
}

/**
 * Where an escape (`\x`) or a character class (`[...]`) starting at `j` ends (its last index),
 * so brace scanning treats their `{`, `}` and `,` as literal; `j` itself for any other character.
 */
function literalEnd(s: string, j: number): number {
  if (s[j] === '\\') return j + 1;
  if (s[j] === '[') {
    const end = classEnd(s, j);
    if (end > 0) return end - 1;
  }
  return j;
}

/** The index of the `}` closing the brace at `open`, or -1. */
function braceEnd(s: string, open: number): number {
  let depth = 0;
  for (let j = open; j < s.length; j++) {
    const skip = literalEnd(s, j);
    if (skip !== j) j = skip;
    else if (s[j] === '{') depth++;
    else if (s[j] === '}' && --depth === 0) return j;
  }
  return -1;
}

/** Splits a brace's inside at its top-level commas (none: one part). */
function topLevelParts(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let j = 0; j < s.length; j++) {
    const skip = literalEnd(s, j);
    const ch = s[j]!;
    if (skip !== j) j = skip;
    else if (ch === '{') depth++;
    else if (ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(s.slice(start, j));
      start = j + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

function tooMany(): GlobError {
  return new GlobError(`expands to more than ${MAX_BRACE_ALTERNATIVES} alternatives ({…} groups multiply); split it into several globs`);
}

function rangeOf(inner: string): string[] | null {
  const num = /^(-?\d+)\.\.(-?\d+)$/.exec(inner);
  const alpha = num ? null : /^([a-zA-Z])\.\.([a-zA-Z])$/.exec(inner);
  if (!num && !alpha) return null;
  const a = num ? Number(num[1]) : alpha![1]!.charCodeAt(0);
  const b = num ? Number(num[2]) : alpha![2]!.charCodeAt(0);
  if (Math.abs(b - a) + 1 > MAX_BRACE_ALTERNATIVES) throw tooMany();
  const out: string[] = [];
  const step = a <= b ? 1 : -1;
  for (let v = a; ; v += step) {
    // Letters escaped: a range like {Z..a} passes through `[`, `\\` and `]`, which are literal here.
    out.push(num ? String(v) : `\\${String.fromCharCode(v)}`);
    if (v === b) break;
  }
  return out;
}

/** Brace expansion, bounded: every alternative as a flat glob (escapes kept for the tokenizer). */
function expandBraces(s: string): string[] {
  let results = [''];
  const append = (text: string) => {
    results = results.map((r) => r + text);
  };
  const product = (alts: string[]) => {
    if (results.length * alts.length > MAX_BRACE_ALTERNATIVES) throw tooMany();
    const next: string[] = [];
    for (const r of results) for (const a of alts) next.push(r + a);
    results = next;
  };
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\') {
      append(s.slice(i, i + 2));
      i++;
    } else if (ch === '[') {
      const end = classEnd(s, i);
      if (end < 0) throw unclosedClass();
      append(s.slice(i, end));
      i = end - 1;
    } else if (ch === '{') {
      const close = braceEnd(s, i);
      if (close < 0) throw new GlobError('has a "{" that is not closed (write "\\{" for a literal one)');
      const inner = s.slice(i + 1, close);
      const parts = topLevelParts(inner);
      let alts: string[];
      if (parts.length > 1) {
        alts = [];
        for (const p of parts) {
          for (const e of expandBraces(p)) {
            alts.push(e);
            if (alts.length > MAX_BRACE_ALTERNATIVES) throw tooMany();
          }
        }
      } else {
        // No comma: a range, or literal braces around what is inside (as `{a}` is in picomatch).
        alts = rangeOf(inner) ?? expandBraces(inner).map((e) => `\\{${e}\\}`);
      }
      product(alts);
      i = close;
    } else {
      append(ch);
    }
  }
  return results;
}

/** One segment (no `/`) as elements; `*` runs collapse into one star. */
function segmentElements(seg: string): Element[] {
  const out: Element[] = [];
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i]!;
    if (ch === '\\') {
      // A trailing backslash is itself (picomatch matches "a\\" literally).
      out.push({ t: 'char', c: i + 1 < seg.length ? seg.charCodeAt(++i) : 0x5c });
    } else if (ch === '*') {
      while (seg[i + 1] === '*') i++;
      out.push({ t: 'star' });
    } else if (ch === '?') out.push({ t: 'any' });
    else if (ch === '[') {
      const end = classEnd(seg, i);
      if (end < 0) throw unclosedClass();
      out.push({ t: 'class', cls: parseClass(seg, i, end) });
      i = end - 1;
    } else out.push({ t: 'char', c: seg.charCodeAt(i) });
  }
  return out;
}

/** Splits a flat glob at its `/` (escaped ones and those in classes are not separators). */
function segmentsOf(flat: string): string[] {
  const segs: string[] = [];
  let start = 0;
  for (let i = 0; i < flat.length; i++) {
    const ch = flat[i]!;
    if (ch === '\\') i++;
    else if (ch === '[') {
      const end = classEnd(flat, i);
      if (end < 0) throw unclosedClass();
      if (flat.slice(i, end).includes('/')) throw new GlobError('has a "/" inside [...], which never matches (a class matches one character of a name)');
      i = end - 1;
    } else if (ch === '/') {
      segs.push(flat.slice(start, i));
      start = i + 1;
    }
  }
  segs.push(flat.slice(start));
  return segs;
}

/** Adds one flat glob to the NFA, from `start`, ending in `accept`. */
function build(nfa: Nfa, flat: string, start: number, accept: number): void {
  let body = flat;
  while (body.startsWith('./')) body = body.slice(2);
  const segs = segmentsOf(body);
  let cur = start;
  const step = (kind: number, arg = 0) => {
    const next = nfa.add(HUB);
    const st = nfa.add(kind, arg, next);
    nfa.link(cur, st);
    cur = next;
  };
  let slashTaken = false; // the `/` after a `**/` is part of its loop
  let endsWithStar = false; // the segment before ends in `*`
  for (let k = 0; k < segs.length; k++) {
    const seg = segs[k]!;
    const last = k === segs.length - 1;
    if (seg === '**' && last) {
      // `a/**`: "a" itself, or "a/" and anything below; a lone `**` (or `**/**`): anything. As in
      // picomatch, `a*/**` wants the `/` (it is not "a*" itself).
      const tail = nfa.add(HUB);
      const anyChar = nfa.add(ANY, 0, tail);
      nfa.link(tail, anyChar);
      nfa.link(tail, accept);
      if (k === 0 || slashTaken) nfa.link(cur, tail);
      else {
        if (!endsWithStar) nfa.link(cur, accept);
        nfa.link(cur, nfa.add(CHAR, SLASH, tail));
      }
      return;
    }
    if (k > 0 && !slashTaken) step(CHAR, SLASH);
    slashTaken = false;
    if (seg === '**') {
      // `**/`: zero or more whole folders, each with its `/`: ([^/]+/)*
      const loop = nfa.add(HUB);
      nfa.link(cur, loop);
      const inName = nfa.add(HUB);
      const nameChar = nfa.add(NOT_SLASH, 0, inName);
      nfa.link(loop, nameChar);
      nfa.link(inName, nameChar);
      nfa.link(inName, nfa.add(CHAR, SLASH, loop));
      cur = loop;
      slashTaken = true;
      continue;
    }
    const elements = segmentElements(seg);
    endsWithStar = elements.at(-1)?.t === 'star';
    for (const el of elements) {
      if (el.t === 'char') step(CHAR, el.c);
      else if (el.t === 'any') step(NOT_SLASH);
      else if (el.t === 'class') {
        nfa.classes.push(el.cls);
        step(CLASS, nfa.classes.length - 1);
      } else {
        const loop = nfa.add(HUB);
        nfa.link(cur, loop);
        nfa.link(loop, nfa.add(NOT_SLASH, 0, loop));
        cur = loop;
      }
    }
  }
  nfa.link(cur, accept);
}

export type GlobMatcher = (path: string) => boolean;

/** Compiles one glob; GlobError (with a message for the caller to prefix) when it cannot be. */
export function compileGlob(glob: string): GlobMatcher {
  if (glob.length > MAX_GLOB_CHARS) throw new GlobError(`is longer than ${MAX_GLOB_CHARS} characters (the limit for one glob)`);
  let body = glob;
  let negated = false;
  while (body.startsWith('!') && body[1] !== '(') {
    negated = !negated;
    body = body.slice(1);
  }
  const wildcards = scanRaw(body);
  if (wildcards > MAX_GLOB_WILDCARDS) {
    throw new GlobError(`has ${wildcards} wildcards, more than the ${MAX_GLOB_WILDCARDS} allowed in one glob (each *, ?, ** and [...] counts)`);
  }
  const nfa = new Nfa();
  const start = nfa.add(HUB);
  const accept = nfa.add(ACCEPT);
  for (const flat of expandBraces(body)) {
    const s = nfa.add(HUB);
    nfa.link(start, s);
    build(nfa, flat, s, accept);
  }
  const match = simulate(nfa, start);
  return negated ? (p) => !match(p) : match;
}

/** Distinct state sets cached as DFA states per glob; past it the cache starts over (memory bound). */
const MAX_DFA_STATES = 1_024;

interface DState {
  /** The NFA states live here (consuming ones and ACCEPT), sorted. */
  states: Int32Array;
  accept: boolean;
  /** Transitions computed so far, by UTF-16 code unit. */
  next: Map<number, DState>;
}

/**
 * The set-of-states simulation. Each character moves every live state at most once (linear in the
 * path for a given glob); the sets met are cached as DFA states, built lazily, so a walk of many
 * similar names mostly costs one map lookup per character.
 */
function simulate(nfa: Nfa, start: number): GlobMatcher {
  const { kind, arg, out, eps, classes } = nfa;
  const n = kind.length;
  // Epsilon closures of every state, computed once: the consuming states (and ACCEPT) reachable.
  const closure: Int32Array[] = new Array(n);
  const mark = new Int32Array(n);
  let gen = 0;
  for (let s = 0; s < n; s++) {
    gen++;
    const found: number[] = [];
    const stack = [s];
    mark[s] = gen;
    while (stack.length > 0) {
      const x = stack.pop()!;
      if (kind[x] !== HUB) found.push(x);
      for (const y of eps[x]!) {
        if (mark[y] !== gen) {
          mark[y] = gen;
          stack.push(y);
        }
      }
    }
    closure[s] = Int32Array.from(found);
  }
  let cache = new Map<string, DState>();
  let generation = 0;
  const intern = (list: number[]): DState => {
    list.sort((a, b) => a - b);
    const key = list.join(',');
    let d = cache.get(key);
    if (!d) {
      if (cache.size >= MAX_DFA_STATES) {
        cache = new Map();
        generation++;
      }
      let accept = false;
      for (const s of list) if (kind[s] === ACCEPT) accept = true;
      d = { states: Int32Array.from(list), accept, next: new Map() };
      cache.set(key, d);
    }
    return d;
  };
  const seen = new Int32Array(n);
  let stamp = 0;
  const step = (from: DState, c: number): DState => {
    if (++stamp > 0x7ffffff0) {
      seen.fill(0);
      stamp = 1;
    }
    const list: number[] = [];
    const states = from.states;
    for (let k = 0; k < states.length; k++) {
      const s = states[k]!;
      const kd = kind[s]!;
      let ok: boolean;
      if (kd === CHAR) ok = arg[s] === c;
      else if (kd === NOT_SLASH) ok = c !== SLASH;
      else if (kd === ANY) ok = true;
      else if (kd === CLASS) ok = classMatches(classes[arg[s]!]!, c);
      else ok = false; // ACCEPT consumes nothing
      if (!ok) continue;
      const targets = closure[out[s]!]!;
      for (let j = 0; j < targets.length; j++) {
        const t = targets[j]!;
        if (seen[t] !== stamp) {
          seen[t] = stamp;
          list.push(t);
        }
      }
    }
    return intern(list);
  };
  let first = intern(Array.from(closure[start]!));
  let firstGeneration = generation;
  return (path: string) => {
    // A cache that started over gets the start state again (its old links stay valid, unshared).
    if (firstGeneration !== generation) {
      first = intern(Array.from(first.states));
      firstGeneration = generation;
    }
    let d = first;
    for (let i = 0; i < path.length; i++) {
      if (d.states.length === 0) return false;
      const c = path.charCodeAt(i);
      let nx = d.next.get(c);
      if (!nx) {
        nx = step(d, c);
        // Bounded per state: a name's alphabet is small, but hostile names need not be.
        if (d.next.size < 256) d.next.set(c, nx);
      }
      d = nx;
    }
    return d.accept;
  };
}
