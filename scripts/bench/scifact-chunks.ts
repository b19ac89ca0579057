/**
 * Chunk texts and queries for the knowledge-base scale benchmarks (kb-scale, kb-restart).
 */
import fs from 'node:fs';
import path from 'node:path';
import { SCIFACT } from './harness.ts';
import { lcg, sciFactLike } from './kb-scale-corpus.ts';

export interface ChunkSource {
  kind: string;
  chunk: () => string;
  queries: string[];
}

/**
 * Chunks and queries like the measurement: SciFact corpus sentences (1-3 per chunk) and
 * SciFact train claims as queries; generated SciFact-like ones when ../shared/eval is absent.
 */
export function scifactSource(count: number): ChunkSource {
  const queriesFile = path.join(path.dirname(SCIFACT), 'queries.train.jsonl');
  if (fs.existsSync(SCIFACT) && fs.existsSync(queriesFile)) {
    const sentences: string[] = [];
    for (const line of fs.readFileSync(SCIFACT, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const d = JSON.parse(line) as { title: string; text: string };
      sentences.push(d.title);
      for (const s of d.text.split(/(?<=[.!?])\s+(?=[A-Z])/)) if (s.length > 20) sentences.push(s);
    }
    const queries = fs
      .readFileSync(queriesFile, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { text: string }).text);
    const r = lcg(7);
    const pick = () => sentences[Math.floor(r() * sentences.length)];
    return {
      kind: `SciFact corpus sentences (${sentences.length}), 1-3 random ones per chunk; SciFact train claims as queries`,
      chunk: () => {
        const n = 1 + Math.floor(r() * 3);
        let s = pick();
        for (let i = 1; i < n; i++) s += ` ${pick()}`;
        return s;
      },
      queries: queries.slice(0, count),
    };
  }
  const gen = sciFactLike(3);
  return { kind: 'generated SciFact-like sentences and claims (../shared/eval/scifact absent)', chunk: gen.next, queries: Array.from({ length: count }, gen.query) };
}
