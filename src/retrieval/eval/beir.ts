/**
 * Readers for the BEIR data format: corpus.jsonl ({_id, title, text}), queries.jsonl ({_id, text})
 * and qrels TSV (query-id, corpus-id, score, with a header row).
 */
import { readFile } from 'node:fs/promises';

export interface BeirDoc {
  id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  id: string;
  text: string;
}

/** query id -> (doc id -> graded relevance > 0) */
export type Qrels = Map<string, Map<string, number>>;

function parseJsonl<T>(raw: string, file: string, pick: (o: Record<string, unknown>, line: number) => T): T[] {
  const out: T[] = [];
  raw.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      throw new Error(`${file}:${i + 1}: not valid JSON`);
    }
    if (!o || typeof o !== 'object') throw new Error(`${file}:${i + 1}: not a JSON object`);
    out.push(pick(o as Record<string, unknown>, i + 1));
  });
  return out;
}

const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

export async function readCorpus(file: string): Promise<BeirDoc[]> {
  return parseJsonl(await readFile(file, 'utf8'), file, (o, line) => {
    const id = str(o._id);
    if (!id) throw new Error(`${file}:${line}: missing _id`);
    return { id, title: str(o.title), text: str(o.text) };
  });
}

export async function readQueries(file: string): Promise<BeirQuery[]> {
  return parseJsonl(await readFile(file, 'utf8'), file, (o, line) => {
    const id = str(o._id);
    if (!id) throw new Error(`${file}:${line}: missing _id`);
    return { id, text: str(o.text) };
  });
}

export async function readQrels(file: string): Promise<Qrels> {
  const qrels: Qrels = new Map();
  const lines = (await readFile(file, 'utf8')).split('\n');
  lines.forEach((line, i) => {
    const cols = line.trim().split('\t');
    if (cols.length < 3) return;
    const score = Number(cols[2]);
    if (!Number.isFinite(score)) {
      if (i === 0) return; // header row
      throw new Error(`${file}:${i + 1}: score is not a number`);
    }
    if (score <= 0) return;
    let m = qrels.get(cols[0]);
    if (!m) qrels.set(cols[0], (m = new Map()));
    m.set(cols[1], score);
  });
  return qrels;
}
