/**
 * `npm run bench:languages`: lexical retrieval per language on a BEIR-format multilingual set
 * (default ../shared/eval/xquad-dev: 12 languages, 240 paragraphs and ~632 questions each), our
 * collection lexical index with each analyzer variant beside SQLite FTS5 (trigram and unicode61
 * tokenizers, bm25()) and wink-bm25-text-search, all over the very same paragraphs.
 *
 * A document's language is detected once from its text (as ingestion does); a query's language is
 * detected from the query, falling back to the collection's most common language when the query is
 * too short to tell or names a language no document of the collection has (the analyzer's
 * documented fallback). Prints nDCG@10 and Recall@10 per language
 * and the size of each lexical index.
 *
 *   npm run bench:languages
 *   LANGS=ru,el EVAL_SET=../shared/eval/xquad-dev npm run bench:languages
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';
import { detectLanguage } from '../../src/language/detect.ts';
import { CollectionLexicalIndex } from '../../src/kb/lexical-index.ts';
import { Analyzer, type AnalyzerOptions } from '../../src/retrieval/tokenizer.ts';
import { log, round, runStandalone, SectionBuilder, SHARED } from './harness.ts';

const require = createRequire(import.meta.url);
const SET_DIR = path.resolve(process.env.EVAL_SET ?? path.join(SHARED, 'eval', 'xquad-dev'));

interface Corpus {
  docs: Array<{ id: string; title: string; text: string }>;
  queries: Array<{ id: string; text: string }>;
  qrels: Map<string, Set<string>>;
}

function readJsonl<T>(file: string): T[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

function load(dir: string): Corpus {
  const docs = readJsonl<{ _id: string; title?: string; text: string }>(path.join(dir, 'corpus.jsonl')).map((d) => ({ id: d._id, title: d.title ?? '', text: d.text.replace(/^\ufeff/, '') }));
  const qrels = new Map<string, Set<string>>();
  for (const line of fs.readFileSync(path.join(dir, 'qrels.tsv'), 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.split('\t');
    if (q && d && Number(s) > 0) (qrels.get(q) ?? qrels.set(q, new Set()).get(q)!).add(d);
  }
  const queries = readJsonl<{ _id: string; text: string }>(path.join(dir, 'queries.jsonl'))
    .filter((q) => qrels.has(q._id))
    .map((q) => ({ id: q._id, text: q.text }));
  return { docs, queries, qrels };
}

function ndcgAt10(ranked: string[], relevant: Set<string>): number {
  let dcg = 0;
  for (let i = 0; i < Math.min(10, ranked.length); i++) if (relevant.has(ranked[i])) dcg += 1 / Math.log2(i + 2);
  let ideal = 0;
  for (let i = 0; i < Math.min(10, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return ideal > 0 ? dcg / ideal : 0;
}

function recallAt10(ranked: string[], relevant: Set<string>): number {
  let hit = 0;
  for (const id of ranked.slice(0, 10)) if (relevant.has(id)) hit++;
  return relevant.size ? hit / relevant.size : 0;
}

type Ranker = { name: string; rank: (query: string) => string[]; bytes: number | null };

function detected(text: string): string | undefined {
  const d = detectLanguage(text);
  return d.confidence >= 0.5 ? d.language_code : undefined;
}

function ours(name: string, opts: AnalyzerOptions, c: Corpus): Ranker {
  const analyzer = new Analyzer(opts);
  const index = new CollectionLexicalIndex(analyzer);
  const counts = new Map<string, number>();
  const chunks = c.docs.map((d, i) => {
    const language = detected(d.text);
    if (language) counts.set(language, (counts.get(language) ?? 0) + 1);
    return { id: i, text: d.text, heading_path: d.title ? [d.title] : [], language };
  });
  index.add(chunks);
  const dominant = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  const bytes = index.serialize().length;
  return {
    name,
    bytes,
    rank: (q) => {
      const d = detected(q);
      return index.search(q, 10, undefined, d && counts.has(d) ? d : dominant).map((h) => c.docs[h.id].id);
    },
  };
}

function fts5(name: string, tokenize: string, c: Corpus, queryOf: (q: string) => string | null): Ranker {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE d USING fts5(id UNINDEXED, body, tokenize='${tokenize}')`);
  const insert = db.prepare('INSERT INTO d(id, body) VALUES (?, ?)');
  for (const d of c.docs) insert.run(d.id, d.title ? `${d.title}\n${d.text}` : d.text);
  const select = db.prepare('SELECT id FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 10');
  const bytes = (db.prepare("SELECT SUM(length(block)) AS b FROM d_data").get() as { b: number }).b;
  return {
    name,
    bytes,
    rank: (q) => {
      const expr = queryOf(q);
      if (!expr) return [];
      try {
        return (select.all(expr) as Array<{ id: string }>).map((r) => r.id);
      } catch {
        return [];
      }
    },
  };
}

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
const words = (q: string) => q.normalize('NFKC').match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];

/** FTS5 trigram: the query's trigrams OR-ed (a trigram table matches substrings of 3+ characters). */
function trigramQuery(q: string): string | null {
  const chars = Array.from(q.normalize('NFKC').toLowerCase().replace(/\s+/g, ' '));
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) {
    const g = chars.slice(i, i + 3).join('');
    if (!g.includes('"')) grams.add(g);
  }
  return grams.size ? [...grams].map(quote).join(' OR ') : null;
}

function wordQuery(q: string): string | null {
  const w = words(q);
  return w.length ? w.map(quote).join(' OR ') : null;
}

/** wink-bm25-text-search with its documented prep (English stemming only where the language is English). */
function wink(c: Corpus, language: string): Ranker {
  const bm25 = require('wink-bm25-text-search') as () => {
    defineConfig(c: object): void;
    definePrepTasks(t: unknown[]): void;
    addDoc(d: object, id: number): void;
    consolidate(): void;
    search(q: string, k: number): Array<[number, number]>;
  };
  const nlp = require('wink-nlp-utils') as { string: Record<string, (s: string) => unknown>; tokens: Record<string, (t: string[]) => string[]> };
  const engine = bm25();
  engine.defineConfig({ fldWeights: { title: 2, body: 1 } });
  // tokenize0 keeps only Latin letters; a Unicode word split is the obvious setting for other scripts.
  const prep: unknown[] = [nlp.string.lowerCase, (s: string) => s.match(/[\p{L}\p{N}\p{M}]+/gu) ?? []];
  if (language === 'en') prep.push(nlp.tokens.removeWords, nlp.tokens.stem);
  engine.definePrepTasks(prep);
  c.docs.forEach((d, i) => engine.addDoc({ title: d.title, body: d.text }, i));
  engine.consolidate();
  return { name: 'wink-bm25', bytes: null, rank: (q) => engine.search(q, 10).map(([i]) => c.docs[i].id) };
}

async function main() {
  const all = fs.readdirSync(SET_DIR).filter((l) => fs.existsSync(path.join(SET_DIR, l, 'corpus.jsonl'))).sort();
  const langs = process.env.LANGS ? process.env.LANGS.split(',') : all;
  const section = new SectionBuilder('languages', 'Lexical retrieval per language', { set: path.relative(process.cwd(), SET_DIR), languages: langs });
  const variants: Array<[string, AnalyzerOptions]> = [
    ['ours v2 (words, English rules)', {}],
    ['ours + language rules, no trigrams', { languages: true, grams: 0 }],
    ['ours v3 (language rules + trigrams)', { languages: true }],
  ];
  const ndcg = section.table('nDCG@10', ['system', ...langs, 'mean']);
  const recall = section.table('Recall@10', ['system', ...langs, 'mean']);
  const size = section.table('Lexical index bytes (sum over languages)', ['system', 'bytes', 'x v2']);
  const per: Record<string, { ndcg: number[]; recall: number[]; bytes: number }> = {};
  for (const lang of langs) {
    const c = load(path.join(SET_DIR, lang));
    log(`${lang}: ${c.docs.length} documents, ${c.queries.length} questions`);
    const rankers: Ranker[] = [
      ...variants.map(([name, opts]) => ours(name, opts, c)),
      fts5('FTS5 trigram', 'trigram', c, trigramQuery),
      fts5('FTS5 unicode61', 'unicode61 remove_diacritics 2', c, wordQuery),
      wink(c, lang),
    ];
    for (const r of rankers) {
      let n = 0;
      let rc = 0;
      for (const q of c.queries) {
        const ranked = r.rank(q.text);
        n += ndcgAt10(ranked, c.qrels.get(q.id)!);
        rc += recallAt10(ranked, c.qrels.get(q.id)!);
      }
      const e = (per[r.name] ??= { ndcg: [], recall: [], bytes: 0 });
      e.ndcg.push(n / c.queries.length);
      e.recall.push(rc / c.queries.length);
      e.bytes += r.bytes ?? 0;
    }
  }
  const base = per[variants[0][0]].bytes;
  for (const [name, e] of Object.entries(per)) {
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    ndcg.rows.push([name, ...e.ndcg.map((x) => round(x, 3)), round(mean(e.ndcg), 3)]);
    recall.rows.push([name, ...e.recall.map((x) => round(x, 3)), round(mean(e.recall), 3)]);
    size.rows.push([name, e.bytes || null, e.bytes ? round(e.bytes / base, 2) : null]);
  }
  section.note('Chunk language: detected per paragraph; query language: detected per query, else the collection\'s most common language.');
  section.note('FTS5 trigram is queried with the query\'s trigrams OR-ed; FTS5 unicode61 and wink with the query\'s words. Sizes: our serialized lexical snapshot, FTS5\'s data blocks.');
  for (const t of [ndcg, recall, size]) {
    console.log(`\n${t.title}\n${t.columns.join('\t')}`);
    for (const row of t.rows) console.log(row.join('\t'));
  }
  return section.finish();
}

await runStandalone(main);
