// The language-aware analyzer: a language's inflected forms meet, Vietnamese tone marks stay
// distinct, English is untouched, and an analyzer without languages keeps the v2 tokens and
// signature that existing indexes were built with.
import t from 'tap';
import { CollectionLexicalIndex } from '../../src/kb/lexical-index.ts';
import { Analyzer, GRAM_MARK } from '../../src/retrieval/tokenizer.ts';

const words = (terms: string[]) => terms.filter((x) => !x.startsWith(GRAM_MARK));
const grams = (terms: string[]) => terms.filter((x) => x.startsWith(GRAM_MARK));

t.test('inflected forms of one word give one term in languages with a stemmer', async (t) => {
  const a = new Analyzer({ languages: true });
  const cases: Array<[string, string, string]> = [
    ['ru', 'защита', 'защиты'],
    ['de', 'Häuser', 'Haus'],
    ['es', 'canciones', 'canción'],
    ['el', 'πόλεις', 'πόλη'],
    ['tr', 'evlerden', 'ev'],
    ['ar', 'المدينة', 'مدينة'],
  ];
  for (const [lang, x, y] of cases) t.same(words(a.tokenize(x, lang)), words(a.tokenize(y, lang)), `${lang}: ${x} ~ ${y}`);
  // Without the language (or with languages off) the Cyrillic forms stay apart, as in v2.
  t.not(new Analyzer().tokenize('защита')[0], new Analyzer().tokenize('защиты')[0]);
  t.not(a.tokenize('защита')[0], a.tokenize('защиты')[0]);
});

t.test('stop words of the language are dropped; content words are kept', async (t) => {
  const a = new Analyzer({ languages: true, grams: 0 });
  t.same(a.tokenize('и в защита', 'ru'), a.tokenize('защита', 'ru'));
  t.same(a.tokenize('der Hund und die Katze', 'de').length, 2);
});

t.test('Vietnamese keeps tone marks (they tell syllables apart); other languages fold them', async (t) => {
  const a = new Analyzer({ languages: true, grams: 0 });
  const vi = ['ma', 'má', 'mà', 'mả', 'mã', 'mạ'].map((w) => a.tokenize(w, 'vi')[0]);
  t.equal(new Set(vi).size, 6, 'six distinct Vietnamese terms');
  t.equal(new Set(['ma', 'má', 'mà'].map((w) => new Analyzer().tokenize(w)[0])).size, 1, 'v2 folds them into one');
  t.same(a.tokenize('café', 'fr'), a.tokenize('cafe', 'fr'), 'French folds');
});

t.test('trigrams: for languages other than English only, marked apart from words; Thai by trigrams', async (t) => {
  const a = new Analyzer({ languages: true });
  t.same(grams(a.tokenize('evaluation of retrieval', 'en')), [], 'no trigrams for English');
  t.same(a.tokenize('evaluation of retrieval', 'en'), new Analyzer().tokenize('evaluation of retrieval'), 'English is exactly v2');
  t.same(grams(a.tokenize('Защита', 'ru')), ['защ', 'ащи', 'щит', 'ита'].map((g) => GRAM_MARK + g));
  const thai = a.tokenize('ทีมรับ', 'th');
  t.same(thai, ['ทีม', 'ีมร', 'มรั', 'รับ'], 'a Thai run gives its trigrams');
  // The script decides, not the language label: a Thai document detected with low confidence (no
  // language, or English) still indexes the trigrams its Thai queries look for.
  t.same(a.tokenize('ทีมรับ'), thai, 'without a language: the same trigrams');
  t.same(a.tokenize('ทีม รับ', 'en'), thai, 'labelled English: the same trigrams, across the space');
  t.same(new Analyzer().tokenize('ทีมรับ'), ['ที', 'ีม', 'มร', 'รั', 'ับ'], 'the v2 analyzer keeps its character bigrams');
  t.same(new Analyzer().tokenize('ทีมรับ'), ['ที', 'ีม', 'มร', 'รั', 'ับ'], 'v2 gives bigrams');
  // An ASCII borrowing in a non-Latin language is analysed as English (Porter, English stop words).
  t.same(words(a.tokenize('the Panthers', 'ru')), new Analyzer().tokenize('the Panthers'));
});

t.test('signatures: v2 without languages (existing indexes keep theirs), v3 with them', async (t) => {
  t.equal(new Analyzer().signature, 'v2:stem=porter:stop=extended:dec=true:hy=false');
  t.equal(new Analyzer({ grams: 3 }).signature, new Analyzer().signature, 'grams alone do nothing');
  t.equal(new Analyzer({ languages: true }).signature, 'v3:stem=porter:stop=extended:dec=true:hy=false:lang=rules:grams=3:script-grams');
  t.not(new Analyzer({ languages: true, grams: 0 }).signature, new Analyzer({ languages: true }).signature);
});

t.test('through the collection lexical index: a Russian question finds its paragraph by another form', async (t) => {
  const docs = [
    'Защита команды уступила 308 очков и заняла шестое место в лиге.',
    'Нападение команды набрало больше всего очков в сезоне.',
    'Стадион вмещает семьдесят тысяч зрителей.',
  ];
  const run = (analyzer: Analyzer) => {
    const index = new CollectionLexicalIndex(analyzer);
    index.add(docs.map((text, id) => ({ id, text, heading_path: [], language: 'ru' })));
    return index.search('Сколько очков уступила защита?', 3, undefined, 'ru');
  };
  const v3 = run(new Analyzer({ languages: true }));
  t.equal(v3[0]?.id, 0);
  t.ok(v3[0].score > (v3[1]?.score ?? 0));
  // Same question in another inflection ("защиты", "уступили"): v3 still ranks paragraph 0 first.
  const index = new CollectionLexicalIndex(new Analyzer({ languages: true }));
  index.add(docs.map((text, id) => ({ id, text, heading_path: [], language: 'ru' })));
  t.equal(index.search('защиты уступили', 3, undefined, 'ru')[0]?.id, 0);
  const v2 = new CollectionLexicalIndex(new Analyzer());
  v2.add(docs.map((text, id) => ({ id, text, heading_path: [] })));
  t.same(v2.search('защиты уступили', 3), [], 'v2 has no term in common');
});
