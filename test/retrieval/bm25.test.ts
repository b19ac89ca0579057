import t from 'tap';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import type { Bm25Params, LexicalDoc } from '../../src/retrieval/bm25.ts';
import { DocumentLexicalIndex } from '../../src/retrieval/document-lexical-index.ts';

/** The server's one BM25F (the collection engine's index, positions as ids); a title is the heading path. */
const Bm25Index = {
  build: (docs: LexicalDoc[], a: Analyzer, params?: Partial<Bm25Params>) =>
    DocumentLexicalIndex.build(docs.map((d) => ({ text: d.body, heading_path: d.title ? [d.title] : [] })), a, params),
};

const analyzer = new Analyzer();

t.test('scores follow the BM25 formula (Lucene idf, k1/b length normalisation)', async (t) => {
  const docs = [{ body: 'apple banana' }, { body: 'apple apple cherry date' }, { body: 'cherry' }];
  const k1 = 1.2;
  const b = 0.75;
  const idx = Bm25Index.build(docs, analyzer, { k1, b });
  const hits = idx.search('apple', 10);
  // computed by hand: N=3, df(apple)=2, lengths 2,4,1 -> avg 7/3
  const idf = Math.log(1 + (3 - 2 + 0.5) / (2 + 0.5));
  const score = (tf: number, len: number) => (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * len) / (7 / 3)));
  t.same(hits.map((h) => h.index), [1, 0]);
  t.ok(Math.abs(hits[0].score - score(2, 4)) < 1e-6, `doc 1 score ${hits[0].score}`);
  t.ok(Math.abs(hits[1].score - score(1, 2)) < 1e-6, `doc 0 score ${hits[1].score}`);
});

t.test('unknown terms, empty queries and k <= 0 return nothing', async (t) => {
  const idx = Bm25Index.build([{ body: 'alpha beta' }], analyzer);
  t.same(idx.search('zeta', 5), []);
  t.same(idx.search('', 5), []);
  t.same(idx.search('the of and', 5), []);
  t.same(idx.search('alpha', 0), []);
  t.equal(Bm25Index.build([], analyzer).search('alpha', 3).length, 0);
});

t.test('stemming matches inflected forms; repeated query terms weigh more', async (t) => {
  const idx = Bm25Index.build([{ body: 'Vaccination reduces infections' }, { body: 'vaccinated infected' }], analyzer);
  const hits = idx.search('vaccinations infection', 5);
  t.equal(hits.length, 2);
  const single = idx.search('reduce', 5)[0].score;
  const twice = idx.search('reduce reduced', 5)[0].score;
  t.ok(Math.abs(twice - 2 * single) < 1e-9);
});

t.test('title field: a title match lifts a document; titleWeight scales it', async (t) => {
  const docs = [
    { title: 'Insulin resistance', body: 'A study of metabolic markers in adults.' },
    { title: 'Sleep quality', body: 'A study of metabolic markers and insulin in adults.' },
  ];
  const even = Bm25Index.build(docs, analyzer, { titleWeight: 1 });
  t.equal(even.search('insulin', 2).length, 2);
  const boosted = Bm25Index.build(docs, analyzer, { titleWeight: 2 });
  t.equal(boosted.search('insulin', 2)[0].index, 0);
  t.ok(boosted.search('insulin', 2)[0].score > even.search('insulin', 2)[0].score);
  const ignored = Bm25Index.build(docs, analyzer, { titleWeight: 0 });
  t.same(ignored.search('insulin', 2).map((h) => h.index), [1]);
});

t.test('ties break by document order; top k is cut', async (t) => {
  const idx = Bm25Index.build([{ body: 'same text' }, { body: 'same text' }, { body: 'same text' }], analyzer);
  t.same(idx.search('text', 2).map((h) => h.index), [0, 1]);
});

t.test('term ids per document are sorted and distinct', async (t) => {
  const idx = Bm25Index.build([{ title: 'beta', body: 'alpha beta alpha gamma' }], analyzer);
  const ids = Array.from(idx.termIds(0));
  t.equal(ids.length, 3);
  t.same(ids, [...ids].sort((a, b) => a - b));
  t.ok(idx.approxBytes > 0);
  t.equal(idx.vocabularySize, 3);
});

t.test('CJK text is searchable through bigrams', async (t) => {
  const idx = Bm25Index.build([{ body: '東京都の人口' }, { body: '大阪府の経済' }], analyzer);
  t.same(idx.search('東京', 5).map((h) => h.index), [0]);
  t.same(idx.search('経済', 5).map((h) => h.index), [1]);
});

t.test('2,000 documents: queries read the index, never the documents again', async (t) => {
  const words = 'cell protein gene expression tumor mouse patient therapy risk cohort dose signal receptor pathway'.split(' ');
  const bodies = Array.from({ length: 2000 }, (_, i) =>
    Array.from({ length: 120 }, (_, j) => words[(i * 7 + j * 13 + (j * j) % 11) % words.length] + (j % 9 === 0 ? i % 300 : '')).join(' '),
  );
  // Every read of a document's text is counted: the build reads each one, a query none (it walks
  // the postings of its terms; its speed is measured by npm run bench:index, not here).
  let reads = 0;
  const docs = bodies.map((body) => ({
    get body() {
      reads++;
      return body;
    },
  }));
  const idx = Bm25Index.build(docs, new Analyzer());
  t.ok(reads >= docs.length, `the build read every document (${reads} reads)`);
  reads = 0;
  let hits = 0;
  for (let i = 0; i < 50; i++) hits += idx.search(`tumor receptor ${i} dose`, 100).length;
  t.equal(hits, 50 * 100, 'every query fills its 100 results');
  t.equal(reads, 0, 'no query read a document');
});
