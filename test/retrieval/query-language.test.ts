/**
 * The language a collection search analyzes its query in (queryLanguage): the query's own when
 * detection is confident and some document is in it, else the documents' most common language.
 * A collection in one language answers that language for any query (no detection needed), the
 * same as the rule gives.
 */
import t from 'tap';
import { detectLanguage } from '../../src/language/detect.ts';
import { QUERY_LANGUAGE_MIN_CONFIDENCE, queryLanguage } from '../../src/retrieval/query-language.ts';

const QUERIES = [
  'what causes the onset of type 2 diabetes in adults',
  'Quelles sont les causes du réchauffement climatique en Europe',
  'Wie viele Einwohner hat die Stadt Berlin heute',
  'Путин 2004',
  '¿Cuál es la capital de Argentina y cuántos habitantes tiene?',
  'BRCA1',
];

/** The rule spelled out: detected when confident and present, else the most common language. */
function byRule(query: string, docs: Record<string, number>): string | undefined {
  const d = detectLanguage(query);
  if (d.confidence >= QUERY_LANGUAGE_MIN_CONFIDENCE && (docs[d.language_code] ?? 0) > 0) return d.language_code;
  const ranked = Object.entries(docs)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return ranked[0]?.[0];
}

t.test('one language: that language for every query, as the rule gives', async (t) => {
  const collections: Array<Record<string, number>> = [{ en: 40 }, { ru: 3 }, { fr: 12, de: 0 }];
  for (const docs of collections) {
    const only = Object.keys(docs).find((l) => (docs[l] ?? 0) > 0);
    for (const q of QUERIES) {
      t.equal(queryLanguage(q, docs), only, `${JSON.stringify(docs)}: ${q}`);
      t.equal(queryLanguage(q, docs), byRule(q, docs), `${JSON.stringify(docs)}: the rule agrees for ${q}`);
    }
  }
});

t.test('several languages: the confident detected one when present, else the most common', async (t) => {
  const docs = { en: 30, fr: 10, de: 10, es: 5 };
  for (const q of QUERIES) t.equal(queryLanguage(q, docs), byRule(q, docs), q);
  t.equal(queryLanguage('Quelles sont les causes du réchauffement climatique en Europe', docs), 'fr', 'French detected and present');
  t.equal(queryLanguage('Путин 2004', docs), 'en', 'Russian absent: the most common');
  t.equal(queryLanguage('anything at all', {}), byRule('anything at all', {}), 'no documents: the rule (detected nowhere, no most common)');
});
