/**
 * robots.txt as RFC 9309 reads it (with the Crawl-delay extension most servers use):
 *
 * - Groups: one or more `User-agent` lines followed by rules. The crawler obeys the groups whose
 *   user agent is the longest case-insensitive prefix of its product token (the part of the
 *   User-Agent before the first `/` or space); several groups naming that agent are merged; with
 *   none, the `*` groups; with no `*` group either, everything is allowed.
 * - Rules: `Allow` / `Disallow` patterns matched against the path and query from their start;
 *   `*` matches any run of characters, a trailing `$` anchors the end. The longest matching
 *   pattern wins, and on a tie Allow wins (the RFC's "least restrictive"). An empty Disallow
 *   allows everything.
 * - `Crawl-delay: N` (seconds) of the chosen group raises the delay between requests.
 * - `Sitemap:` lines are collected whatever group they sit in.
 *
 * Matching never backtracks: a pattern is split at its `*`s and each literal piece is found with
 * indexOf after the previous one (leftmost is always right for `*`-only patterns), so a hostile
 * file costs O(pattern x path) per check. Only the first 500 KiB of a file is read (the RFC's minimum).
 */

export const MAX_ROBOTS_BYTES = 500 * 1024;
/** Longest pattern kept; longer ones are dropped (no real site needs them). */
const MAX_PATTERN_CHARS = 2048;

interface Rule {
  allow: boolean;
  pattern: string;
  /** The pattern split at `*`, escapes normalized. */
  pieces: string[];
  anchored: boolean;
}

interface Group {
  agents: string[];
  rules: Rule[];
  crawlDelaySeconds?: number;
}

export interface RobotsRules {
  /** Whether `pathAndQuery` (starting with `/`) may be fetched. */
  allowed(pathAndQuery: string): boolean;
  /** Crawl-delay of the chosen group, seconds. */
  crawlDelaySeconds?: number;
  sitemaps: string[];
}

/** %7e -> ~ and upper-case escapes, so a pattern and a path written differently still compare. */
function normalizeEscapes(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(/%([0-9a-fA-F]{2})/g, (_all, hex: string) => {
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/** Non-ASCII characters in a pattern as a server would see them in a request: percent-encoded UTF-8. */
function encodeNonAscii(s: string): string {
  return s.replace(/[^\x00-\x7f]+/g, (run) => encodeURIComponent(run));
}

function compileRule(allow: boolean, raw: string): Rule | null {
  let pattern = normalizeEscapes(encodeNonAscii(raw));
  if (pattern.length > MAX_PATTERN_CHARS) return null;
  let anchored = false;
  if (pattern.endsWith('$')) {
    anchored = true;
    pattern = pattern.slice(0, -1);
  }
  // Runs of `*` are one `*`.
  pattern = pattern.replace(/\*+/g, '*');
  return { allow, pattern: raw, pieces: pattern.split('*'), anchored };
}

/** Length of the match of `rule` against `path` (the RFC compares matched pattern lengths), or -1. */
function matchLength(rule: Rule, path: string): number {
  const { pieces, anchored } = rule;
  if (!path.startsWith(pieces[0])) return -1;
  let pos = pieces[0].length;
  const last = pieces.length - 1;
  for (let i = 1; i < last; i++) {
    const at = path.indexOf(pieces[i], pos);
    if (at < 0) return -1;
    pos = at + pieces[i].length;
  }
  if (last === 0) {
    if (anchored && pos !== path.length) return -1;
  } else if (anchored) {
    const tail = pieces[last];
    if (path.length - tail.length < pos || !path.endsWith(tail)) return -1;
  } else if (path.indexOf(pieces[last], pos) < 0) return -1;
  return rule.pattern.length;
}

function productToken(userAgent: string): string {
  return (userAgent.trim().split(/[\s/]/, 1)[0] ?? '').toLowerCase();
}

export function parseRobots(text: string, userAgent: string): RobotsRules {
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | null = null;
  // A group takes every consecutive User-agent line; the first rule line closes the list.
  let collectingAgents = false;
  for (const rawLine of text.slice(0, MAX_ROBOTS_BYTES).split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (!collectingAgents || !current) {
        current = { agents: [], rules: [] };
        groups.push(current);
        collectingAgents = true;
      }
      current.agents.push(value.toLowerCase());
      continue;
    }
    if (key === 'sitemap') {
      if (value) sitemaps.push(value);
      continue;
    }
    if (key === 'allow' || key === 'disallow') {
      collectingAgents = false;
      if (!current) continue; // rules before any User-agent belong to no group
      if (value === '') continue; // `Disallow:` with nothing allows everything
      const rule = compileRule(key === 'allow', value);
      if (rule) current.rules.push(rule);
      continue;
    }
    if (key === 'crawl-delay') {
      collectingAgents = false;
      const n = Number.parseFloat(value);
      if (current && Number.isFinite(n) && n >= 0) current.crawlDelaySeconds = n;
    }
  }

  const token = productToken(userAgent);
  let best = -1;
  for (const g of groups) for (const a of g.agents) if (a !== '*' && a !== '' && token.startsWith(a) && a.length > best) best = a.length;
  const chosen =
    best >= 0
      ? groups.filter((g) => g.agents.some((a) => a !== '*' && a.length === best && token.startsWith(a)))
      : groups.filter((g) => g.agents.includes('*'));
  const rules = chosen.flatMap((g) => g.rules);
  const delays = chosen.map((g) => g.crawlDelaySeconds).filter((d): d is number => d !== undefined);

  return {
    sitemaps,
    crawlDelaySeconds: delays.length ? Math.max(...delays) : undefined,
    allowed(pathAndQuery: string): boolean {
      const path = normalizeEscapes(pathAndQuery);
      let bestLen = -1;
      let bestAllow = true;
      for (const r of rules) {
        const len = matchLength(r, path);
        if (len > bestLen || (len === bestLen && len >= 0 && r.allow)) {
          bestLen = len;
          bestAllow = r.allow;
        }
      }
      return bestLen < 0 ? true : bestAllow;
    },
  };
}

/** What to do when robots.txt could not be read (RFC 9309 2.3.1). */
export const ALLOW_ALL: RobotsRules = { allowed: () => true, sitemaps: [] };
export const DISALLOW_ALL: RobotsRules = { allowed: () => false, sitemaps: [] };
