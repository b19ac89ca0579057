/**
 * SciFact abstracts as knowledge-base documents, shared by the corpus test and the kb benchmark so
 * both measure the same thing: each abstract is one Markdown file named by its corpus id, its title
 * as the '# ' heading (the chunker puts it in every chunk's heading path, as the eval harness's
 * docToChunk puts it in the one chunk's heading path). A collection ranks chunks; a corpus document
 * ranks where its best chunk does (max-pooling), which is what nDCG over documents needs.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BeirDoc } from '../../../src/retrieval/eval/beir.ts';

/** The Markdown text of one abstract. */
export function abstractMarkdown(d: Pick<BeirDoc, 'title' | 'text'>): string {
  return d.title ? `# ${d.title}\n\n${d.text}\n` : `${d.text}\n`;
}

/** Writes every abstract as `<dir>/<id>.md`; returns the folder. */
export function writeAbstracts(dir: string, docs: readonly BeirDoc[]): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const d of docs) {
    if (!/^[A-Za-z0-9_-]+$/.test(d.id)) throw new Error(`corpus id not usable as a file name: ${JSON.stringify(d.id)}`);
    fs.writeFileSync(path.join(dir, `${d.id}.md`), abstractMarkdown(d));
  }
  return dir;
}

/** The corpus id of a hit's source (the file's real path). */
export const corpusIdOf = (source: string): string => path.basename(source, '.md');

/** Corpus ids in rank order: each document where its first (best) chunk ranks. */
export function rankDocuments(hits: ReadonlyArray<{ source: string }>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const h of hits) {
    const id = corpusIdOf(h.source);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}
