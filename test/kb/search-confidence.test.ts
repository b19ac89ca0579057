/**
 * The confidence level of a collection search on generated collections: made-up words -> 'none'
 * with no results and a plain message; a query with an exact matching chunk -> 'high'; overlap of
 * common words only -> 'low'. Also: the term hashes confidence compares are the index's own.
 */
import t from 'tap';
import { queryTerms, searchCollection, termHash } from '../../src/kb/collection-search.ts';
import { assessConfidence, coverageOf, gapOf } from '../../src/kb/confidence.ts';
import { Bm25Index } from '../retrieval/bm25-reference.ts';
import { lexicalDocOf } from '../../src/retrieval/search.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { fillCollection, openFixture, signal } from './search-fixtures.ts';

const PLANTED = 'The heliotrope vantablack reservoir stores seventeen quintals of marmalade beside the quokka observatory.';

function collection(t: Parameters<typeof openFixture>[0]) {
  const fx = openFixture(t, 'handbook');
  fillCollection(fx, 4, 40);
  fx.add({ key: 'https://docs.example/annex.pdf', title: 'Annex', chunks: [{ text: `Storage. ${PLANTED}`, heading_path: ['Annex', 'Storage'], page: 3 }] });
  return fx;
}

t.test('made-up words: none, no results, a plain message', async (t) => {
  const fx = collection(t);
  const res = await searchCollection(fx.deps(), { query: 'florbix quantumzarg plimbotron' }, signal());
  t.equal(res.confidence, 'none');
  t.same(res.results, []);
  t.match(res.message, /^Nothing in collection "handbook" matches "florbix quantumzarg plimbotron": no chunk contains any of its terms/);
  t.equal(res.total_chunks, 161);
  t.equal(res.retrieval.mode, 'lexical');
});

t.test('a query whose words one chunk holds: high, that chunk first', async (t) => {
  const fx = collection(t);
  const res = await searchCollection(fx.deps(), { query: 'heliotrope vantablack reservoir marmalade quokka observatory', explain: true }, signal());
  t.equal(res.confidence, 'high', res.message);
  t.equal(res.results[0]!.title, 'Annex');
  t.match(res.message, /^High confidence: the top hit contains 100% of the query's weight/);
  t.match(res.trace, { confidence: { coverage: 1, missing_terms: [] } });
});

t.test('only common words overlap: none, with no results unless min_confidence asks for them', async (t) => {
  const fx = collection(t);
  // "budget forecast" occur everywhere; the rest of the question occurs nowhere.
  const query = 'budget forecast for the zanzibarian pelicanfish hatchery expansion';
  const res = await searchCollection(fx.deps(), { query }, signal());
  t.equal(res.confidence, 'none', res.message);
  t.same(res.results, [], 'an off-topic question gets no results by default');
  t.match(res.message, /nothing relevant was found: the best match contains only \d+% of the query's weight/);
  t.match(res.message, /no chunk contains zanzibarian, pelicanfish, hatchery, expansion\./, 'the words as typed, not their stems');
  const asked = await searchCollection(fx.deps(), { query, min_confidence: 'none' }, signal());
  t.equal(asked.confidence, 'none', 'the level is the same');
  t.ok(asked.results.length > 0, "min_confidence: 'none' returns the best matches anyway");
  const strict = await searchCollection(fx.deps(), { query: 'heliotrope vantablack marmalade quintals florbixian', min_confidence: 'high' }, signal());
  t.equal(strict.confidence, 'medium');
  t.same(strict.results, [], 'below min_confidence: no results');
  t.match(strict.message, /No results are returned: min_confidence is high\./);
});

t.test('half the weight of the query: medium', async (t) => {
  const fx = collection(t);
  // Two of the planted chunk's rare words and one made-up word of similar rarity.
  const res = await searchCollection(fx.deps(), { query: 'heliotrope vantablack marmalade quintals florbixian' }, signal());
  t.equal(res.confidence, 'medium', res.message);
  t.equal(res.results[0]!.title, 'Annex');
});

t.test('query term hashes equal the index term ids; coverage, gap and the rule are deterministic', async (t) => {
  const analyzer = new Analyzer();
  const texts = ['Reservoir levels rose', 'The reservoir stores marmalade'];
  const bm = Bm25Index.build(texts.map((text) => lexicalDocOf({ text, heading_path: [] })), analyzer);
  const ids = [...bm.termIds(1)];
  const want = [...new Set(analyzer.tokenize(texts[1]!))].map(termHash).sort((a, b) => a - b);
  t.same(ids, want, 'FNV-1a of the analyzed terms, as Bm25Index keeps them');

  const fx = collection(t);
  const terms = queryTerms(fx.lexical, 'marmalade reservoir florbix budget');
  t.same(terms.map((x) => x.term), ['marmalad', 'reservoir', 'florbix', 'budget']);
  t.same(terms.map((x) => x.df), [1, 1, 0, terms[3]!.df]);
  t.ok(terms[3]!.df > 20, 'a common word has a high df');
  t.ok(terms[2]!.idf > terms[0]!.idf && terms[0]!.idf > terms[3]!.idf, 'absent > rare > common');

  t.equal(coverageOf([{ term: 'a', df: 1, idf: 3 }, { term: 'b', df: 9, idf: 1 }], [true, false]), 0.75);
  t.equal(gapOf([10]), 1);
  t.equal(gapOf([10, 5, 4, 3]), 0.6);
  t.equal(gapOf([]), null);
  const input = { collection: 'c', query: 'q', hits: 1, filtered: false, lexical: { candidates: 3, scores: [9, 3, 2], terms: [{ term: 'q', df: 1, idf: 2 }], topHasTerm: [true] }, dense: null, rerank: null };
  t.same(assessConfidence(input), assessConfidence(input));
  t.equal(assessConfidence(input).confidence, 'high');
  t.equal(assessConfidence({ ...input, rerank: { topLogit: 0.5 } }).confidence, 'medium', 'the reranker decides when it scored');
  t.equal(assessConfidence({ ...input, rerank: { topLogit: 5 } }).confidence, 'high');
  t.equal(assessConfidence({ ...input, rerank: { topLogit: -2 } }).confidence, 'low');
  const noWords = { ...input, lexical: { ...input.lexical, candidates: 0, scores: [], topHasTerm: [false] } };
  t.equal(assessConfidence({ ...noWords, dense: { topScore: 0.1 } }).confidence, 'none', 'no term anywhere and dense far: none');
  t.equal(assessConfidence({ ...noWords, dense: { topScore: 0.55 } }).confidence, 'medium', 'dense alone can carry it');
});

t.test('a large collection: common words alone are none however fully they match; several rare words are high', async (t) => {
  const fx = openFixture(t, 'large');
  // 1,200 chunks of common words: enough that idf tells rare from common (MASS_MIN_CHUNKS).
  fillCollection(fx, 10, 120, 3);
  fx.add({ key: 'https://docs.example/annex.pdf', title: 'Annex', chunks: [{ text: `Storage. ${PLANTED}`, heading_path: ['Annex', 'Storage'], page: 3 }] });
  t.ok(fx.lexical.size >= 1000);
  const common = await searchCollection(fx.deps(), { query: 'what is the budget forecast of the region', explain: true }, signal());
  t.equal(common.confidence, 'none', common.message);
  t.same(common.results, []);
  t.ok((common.trace as unknown as { confidence: { coverage: number } }).confidence.coverage >= 0.6, 'the top hit holds most of the query: coverage alone would not say none');
  t.ok((common.trace as unknown as { confidence: { mass: number } }).confidence.mass < 1.1, 'the matched words are common');
  t.match(common.message, /nothing relevant was found/);
  const rare = await searchCollection(fx.deps(), { query: 'heliotrope vantablack marmalade quokka observatory', explain: true }, signal());
  t.equal(rare.confidence, 'high', rare.message);
  t.equal(rare.results[0]!.title, 'Annex');
  t.ok((rare.trace as unknown as { confidence: { mass: number } }).confidence.mass >= 2.75);
  // One word can never weigh MASS_NONE, yet a chunk holding it is a match: low, with that chunk.
  const oneRare = await searchCollection(fx.deps(), { query: 'quokka', explain: true }, signal());
  t.ok((oneRare.trace as unknown as { confidence: { mass: number } }).confidence.mass < 1.1, 'one word weighs under MASS_NONE');
  t.equal(oneRare.confidence, 'low', oneRare.message);
  t.equal(oneRare.results[0]?.title, 'Annex', 'the chunk holding the word comes back');
  const oneMissing = await searchCollection(fx.deps(), { query: 'zyxwvut' }, signal());
  t.equal(oneMissing.confidence, 'none', 'a word no chunk holds is still none');
  t.same(oneMissing.results, []);
});

t.test('group_by document: each document once, top_k counted in documents', async (t) => {
  const fx = openFixture(t, 'grouped');
  fillCollection(fx, 6, 20, 5);
  const chunks = await searchCollection(fx.deps(), { query: 'supply forecast audit energy', top_k: 10, min_confidence: 'none' }, signal());
  const docsOfChunks = new Set(chunks.results.map((h) => h.document_id));
  t.ok(docsOfChunks.size < chunks.results.length, 'by chunk, a document can come back several times');
  const grouped = await searchCollection(fx.deps(), { query: 'supply forecast audit energy', top_k: 5, group_by: 'document', min_confidence: 'none' }, signal());
  const ids = grouped.results.map((h) => h.document_id);
  t.equal(ids.length, 5, 'five documents');
  t.equal(new Set(ids).size, 5, 'each once');
  t.equal(grouped.results[0]!.chunk_id, chunks.results[0]!.chunk_id, 'the best chunk stands for its document');
  for (let i = 1; i < grouped.results.length; i++) t.ok(grouped.results[i - 1]!.score >= grouped.results[i]!.score, 'best first');
});
