/**
 * Reads an evaluation set the user uploads: the BEIR format (corpus.jsonl {_id, title, text},
 * queries.jsonl {_id, text}, qrels TSV query-id / corpus-id / score with a header row; the same
 * rules as src/retrieval/eval/beir.ts, but from strings, since the browser has no file system), or
 * a simple list of {question, expected} pairs as JSON or JSON Lines. Errors name the file and line.
 */
import type { Qrels } from './metrics.ts';

export interface CorpusDoc {
  id: string;
  title: string;
  text: string;
}

export interface EvalQuery {
  id: string;
  text: string;
}

export interface EvalSet {
  kind: 'beir' | 'list';
  /** What the judgements name: documents (corpus ids, document ids, sources, file names) or chunk ids. */
  level: 'document' | 'chunk';
  queries: EvalQuery[];
  qrels: Qrels;
  /** BEIR only: the documents, for ingesting into a new collection. */
  corpus: CorpusDoc[];
}

export class SetError extends Error {}

const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

function parseJsonl(raw: string, file: string): Array<{ o: Record<string, unknown>; line: number }> {
  const out: Array<{ o: Record<string, unknown>; line: number }> = [];
  raw.split('\n').forEach((text, i) => {
    if (!text.trim()) return;
    let o: unknown;
    try {
      o = JSON.parse(text);
    } catch {
      throw new SetError(`${file}:${i + 1}: not valid JSON`);
    }
    if (!o || typeof o !== 'object' || Array.isArray(o)) throw new SetError(`${file}:${i + 1}: not a JSON object`);
    out.push({ o: o as Record<string, unknown>, line: i + 1 });
  });
  return out;
}

export function parseCorpus(raw: string, file = 'corpus.jsonl'): CorpusDoc[] {
  return parseJsonl(raw, file).map(({ o, line }) => {
    const id = str(o._id);
    if (!id) throw new SetError(`${file}:${line}: missing _id`);
    return { id, title: str(o.title), text: str(o.text) };
  });
}

export function parseQueries(raw: string, file = 'queries.jsonl'): EvalQuery[] {
  return parseJsonl(raw, file).map(({ o, line }) => {
    const id = str(o._id);
    if (!id) throw new SetError(`${file}:${line}: missing _id`);
    const text = str(o.text);
    if (!text.trim()) throw new SetError(`${file}:${line}: empty text`);
    return { id, text };
  });
}

export function parseQrels(raw: string, file = 'qrels.tsv'): Qrels {
  const qrels: Qrels = new Map();
  raw.split('\n').forEach((line, i) => {
    const cols = line.trim().split('\t');
    if (cols.length < 3) return;
    const score = Number(cols[2]);
    if (!Number.isFinite(score)) {
      if (i === 0) return; // header row
      throw new SetError(`${file}:${i + 1}: score is not a number`);
    }
    if (score <= 0) return;
    let m = qrels.get(cols[0]);
    if (!m) qrels.set(cols[0], (m = new Map()));
    m.set(cols[1], score);
  });
  return qrels;
}

/** A BEIR set from its three files; only queries with judgements are kept. */
export function beirSet(files: { corpus?: string; queries: string; qrels: string }): EvalSet {
  const corpus = files.corpus ? parseCorpus(files.corpus) : [];
  const qrels = parseQrels(files.qrels);
  const queries = parseQueries(files.queries).filter((q) => qrels.has(q.id));
  if (queries.length === 0) throw new SetError('no query of queries.jsonl has a judgement in qrels.tsv');
  return { kind: 'beir', level: 'document', queries, qrels, corpus };
}

const EXPECTED_KEYS = ['expected', 'expected_document_id', 'expected_source', 'expected_chunk_id', 'document_id', 'source', 'chunk_id'] as const;

/**
 * A list of {question, expected} pairs (JSON array or JSON Lines). expected names a document (its
 * id, source URL or file name) or, as expected_chunk_id / chunk_id, a chunk; it may be a list.
 * All pairs must be of one level: documents or chunks.
 */
export function listSet(raw: string, file = 'list'): EvalSet {
  const text = raw.trim();
  let rows: Array<{ o: Record<string, unknown>; line: number }>;
  if (text.startsWith('[')) {
    let arr: unknown;
    try {
      arr = JSON.parse(text);
    } catch {
      throw new SetError(`${file}: not valid JSON`);
    }
    rows = (arr as unknown[]).map((o, i) => {
      if (!o || typeof o !== 'object' || Array.isArray(o)) throw new SetError(`${file}: item ${i + 1} is not a JSON object`);
      return { o: o as Record<string, unknown>, line: i + 1 };
    });
  } else rows = parseJsonl(text, file);
  if (rows.length === 0) throw new SetError(`${file}: no pairs`);
  const queries: EvalQuery[] = [];
  const qrels: Qrels = new Map();
  let level: EvalSet['level'] | null = null;
  for (const { o, line } of rows) {
    const question = str(o.question ?? o.query);
    if (!question.trim()) throw new SetError(`${file}:${line}: missing question`);
    const key = EXPECTED_KEYS.find((k) => o[k] !== undefined && o[k] !== null && o[k] !== '');
    if (!key) throw new SetError(`${file}:${line}: missing expected (a document id, source or file name; or expected_chunk_id)`);
    const rowLevel = key.includes('chunk') ? 'chunk' : 'document';
    if (level && level !== rowLevel) throw new SetError(`${file}:${line}: mixes documents and chunks; use one kind of expected for the whole list`);
    level = rowLevel;
    const values = (Array.isArray(o[key]) ? (o[key] as unknown[]) : [o[key]]).map(str).filter(Boolean);
    if (values.length === 0) throw new SetError(`${file}:${line}: expected is empty`);
    const id = `q${queries.length + 1}`;
    queries.push({ id, text: question });
    qrels.set(id, new Map(values.map((v) => [v, 1])));
  }
  return { kind: 'list', level: level ?? 'document', queries, qrels, corpus: [] };
}
