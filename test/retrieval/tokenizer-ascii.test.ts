/**
 * ASCII texts take a plain character scan (and a table of words seen before) instead of NFKC and
 * the Unicode token regex. One non-ASCII character anywhere sends the same text down the regex
 * path, so the two are compared on the same words: they must give the very same terms.
 */
import t from 'tap';
import { Analyzer, type AnalyzerOptions } from '../../src/retrieval/tokenizer.ts';

const MARK = 'ü'; // folds to "u": one extra term at the end on the regex path

function prng(seed: number): (n: number) => number {
  let s = seed;
  return (n) => (s = (s * 1103515245 + 12345) >>> 0) % n;
}

/** Snippets that exercise every branch of the scan: decimals, hyphens, digits in words, edges. */
const PIECES = ['The', 'running', 'COVID-19', 'IL-6', '0.05', '1,000,000', '3.', ',5', '1.5-2', 'a--b', 'x-', '-y', 'R2-D2', 'e-mail', 'p<0.05', '12abc', '1.5abc', 'and', 'stops', '$12', '45%', 'Line', '7:', '_', '\n', '\t', '..', 'x'];

function randomAscii(r: (n: number) => number): string {
  let s = '';
  const words = 1 + r(40);
  for (let i = 0; i < words; i++) {
    s += r(3) === 0 ? PIECES[r(PIECES.length)] : String.fromCharCode(...Array.from({ length: 1 + r(8) }, () => 32 + r(95)));
    s += [' ', '', '-', '.', ','][r(5)];
  }
  return s;
}

for (const opts of [{}, { keepDecimals: false }, { joinHyphenated: true }, { stem: false, stopWords: 'none' }] as AnalyzerOptions[]) {
  t.test(`ASCII scan gives the regex path's terms (${JSON.stringify(opts)})`, async (t) => {
    const fast = new Analyzer(opts);
    const slow = new Analyzer(opts);
    const mark = slow.tokenize(MARK);
    t.equal(mark.length, 1, 'the marker adds one term');
    const r = prng(7);
    let differ = 0;
    let terms = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = randomAscii(r);
      const got = fast.tokenize(text);
      const want = slow.tokenize(`${text} ${MARK}`).slice(0, -1);
      terms += got.length;
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        if (differ++ < 3) t.same(got, want, JSON.stringify(text));
      }
    }
    t.equal(differ, 0, 'no text tokenizes differently');
    t.ok(terms > 100_000, `${terms} terms compared`);
  });
}

t.test('words seen before come back the same when many words compete for the table', async (t) => {
  const a = new Analyzer();
  const r = prng(11);
  // Far more distinct words than the table has slots, drawn again and again.
  const words = Array.from({ length: 60_000 }, (_, i) => `w${i.toString(36)}x${'abcdefghij'[i % 10]}ing`);
  const reference = new Analyzer();
  for (let round = 0; round < 3; round++) {
    const text = Array.from({ length: 20_000 }, () => words[r(words.length)]).join(' ');
    t.same(a.tokenize(text), reference.tokenize(`${text} ${MARK}`).slice(0, -1), `round ${round}`);
  }
});

t.test('the examples of the regex path hold on the ASCII path', async (t) => {
  const a = new Analyzer();
  t.same(a.tokenize('p < 0.05 in 1,000 mice'), ['p', '0.05', '1,000', 'mice']);
  t.same(a.tokenize('IL-6 and COVID-19'), ['il', '6', 'covid', '19']);
  t.same(a.tokenize('The Patients were TREATED with antibiotics.'), ['patient', 'treat', 'antibiot']);
  t.same(a.tokenize('1.5-2 a--b R2-D2'), ['1.5', '2', 'b', 'r2', 'd2']);
});
