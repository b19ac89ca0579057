/**
 * Words hyphenated at a line end: "experi-" + "ment" is one word, but "chat-" + "optimized" is the
 * compound "chat-optimized" and must keep its hyphen. The layout marks every such break with
 * HYPHEN_BREAK after the hyphen; once the whole document is read, each break is decided from the
 * document's own vocabulary:
 *   1. the hyphenated form occurs elsewhere        -> keep the hyphen
 *   2. the joined form occurs elsewhere            -> join
 *   3. a common compound part ("-based", "self-")  -> keep
 *   4. both parts occur elsewhere as words         -> keep
 *   5. otherwise                                   -> join (typesetters split words far more often)
 */

/** Marks a line-end hyphen break in layout output until resolveHyphenBreaks decides it. */
export const HYPHEN_BREAK = '\uE000';

const BREAK_RE = /([\p{L}\p{M}]+)-\uE000([\p{L}\p{M}]+)/gu;
const WORD_RE = /[\p{L}\p{M}]+(?:-[\p{L}\p{M}]+)*/gu;

/** Second parts that make compounds far more often than they end a split word. */
const COMPOUND_TAILS = new Set(
  (
    'based centric optimized oriented driven aware specific level like free wise scale grained tuned trained ' +
    'dependent independent agnostic friendly efficient intensive related defined known sized shaped ' +
    'world time domain source step order class term art shot off up down end'
  ).split(' '),
);
/** First parts that make compounds far more often than they start a split word. */
const COMPOUND_HEADS = new Set('self non cross well state high low long short real fine open zero few half full'.split(' '));

/** Resolves the hyphen breaks of a document's page texts (together: the vocabulary is the document's). */
export function resolveHyphenBreaks(texts: string[]): string[] {
  if (!texts.some((t) => t.includes(HYPHEN_BREAK))) return texts;
  // Only the words keepHyphen asks about are kept: a document's vocabulary is a few hundred
  // thousand words, and adding each to a set was most of this pass on a 400-page file.
  const wanted = new Set<string>();
  for (const t of texts) {
    if (!t.includes(HYPHEN_BREAK)) continue;
    for (const [, left, right] of t.matchAll(BREAK_RE)) {
      const l = left!.toLowerCase();
      const r = right!.toLowerCase();
      wanted.add(`${l}-${r}`).add(l + r).add(l).add(r);
    }
  }
  const vocab = new Set<string>();
  for (const t of texts) {
    const rest = t.includes(HYPHEN_BREAK) ? t.replace(BREAK_RE, ' ') : t;
    for (const m of rest.matchAll(WORD_RE)) {
      const w = m[0].toLowerCase();
      if (wanted.has(w)) vocab.add(w);
      if (w.includes('-')) for (const p of w.split('-')) if (wanted.has(p)) vocab.add(p);
    }
  }
  return texts.map((t) =>
    t.includes(HYPHEN_BREAK)
      ? t.replace(BREAK_RE, (_all, left: string, right: string) => (keepHyphen(left, right, vocab) ? `${left}-${right}` : left + right)).replaceAll(HYPHEN_BREAK, '')
      : t,
  );
}

function keepHyphen(left: string, right: string, vocab: ReadonlySet<string>): boolean {
  const l = left.toLowerCase();
  const r = right.toLowerCase();
  if (vocab.has(`${l}-${r}`)) return true;
  if (vocab.has(l + r)) return false;
  if (COMPOUND_TAILS.has(r) && l.length >= 3) return true;
  if (COMPOUND_HEADS.has(l) && r.length >= 3) return true;
  return l.length >= 3 && r.length >= 3 && vocab.has(l) && vocab.has(r);
}
