import t from 'tap';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';

t.test('English: lower case, stop words dropped, Porter stems', async (t) => {
  const a = new Analyzer();
  t.same(a.tokenize('The Patients were TREATED with antibiotics.'), ['patient', 'treat', 'antibiot']);
  t.same(a.tokenize('running runs runner'), ['run', 'run', 'runner']);
});

t.test('NFKC folds compatibility forms; diacritics of Latin scripts are folded', async (t) => {
  const a = new Analyzer({ stem: false });
  // full-width letters and the "fi" ligature become plain ASCII
  t.same(a.tokenize('ＡＢＣ ﬁnal'), ['abc', 'final']);
  t.same(a.tokenize('Café naïve Ångström'), ['cafe', 'naive', 'angstrom']);
  t.same(a.tokenize('Straße'), ['straße']); // ß has no decomposition: kept
});

t.test('numbers: decimals kept whole, hyphenated compounds split', async (t) => {
  const a = new Analyzer();
  t.same(a.tokenize('p < 0.05 in 1,000 mice'), ['p', '0.05', '1,000', 'mice']);
  t.same(a.tokenize('IL-6 and COVID-19'), ['il', '6', 'covid', '19']);
  t.same(new Analyzer({ joinHyphenated: true }).tokenize('COVID-19'), ['covid', '19', 'covid19']);
  t.same(new Analyzer({ keepDecimals: false }).tokenize('0.05'), ['0', '05']);
});

t.test('CJK and Thai are indexed as character bigrams; other scripts as words', async (t) => {
  const a = new Analyzer();
  t.same(a.tokenize('東京都'), ['東京', '京都']);
  t.same(a.tokenize('日'), ['日']);
  t.same(a.tokenize('カタカナ'), ['カタ', 'タカ', 'カナ']);
  t.same(a.tokenize('ภาษาไทย'), ['ภา', 'าษ', 'ษา', 'าไ', 'ไท', 'ทย']);
  // Mixed runs: the Latin part stays a word
  t.same(a.tokenize('GPU計算'), ['gpu', '計算']);
  t.same(a.tokenize('Всеобщая декларация'), ['всеобщая', 'декларация']);
  t.same(a.tokenize('مرحبا بالعالم'), ['مرحبا', 'بالعالم']);
  t.same(a.tokenize('सभी मनुष्य'), ['सभी', 'मनुष्य']);
});

t.test('options: no stemming, no stop words; signature names them', async (t) => {
  const a = new Analyzer({ stem: false, stopWords: 'none' });
  t.same(a.tokenize('The cats'), ['the', 'cats']);
  t.equal(a.signature, 'v2:stem=none:stop=none:dec=true:hy=false');
  t.equal(new Analyzer().signature, 'v2:stem=porter:stop=extended:dec=true:hy=false');
  t.same(new Analyzer({ stopWords: 'lucene' }).tokenize('we were there'), ['we', 'were']);
});

t.test('empty and symbol-only input yields no tokens', async (t) => {
  const a = new Analyzer();
  t.same(a.tokenize(''), []);
  t.same(a.tokenize('--- ... !!! ***'), []);
});
