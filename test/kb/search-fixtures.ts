/**
 * Collections for the search tests: a real KbStore (SQLite in a temp folder) and a real
 * CollectionLexicalIndex fed with the committed chunks, plus documents built from sections of
 * generated prose whose chunks carry consistent char offsets (optionally overlapping, as the
 * chunker makes them), pages and heading paths.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KbStore } from '../../src/kb/kb-store.ts';
import { CollectionLexicalIndex } from '../../src/kb/lexical-index.ts';
import type { CollectionSearchDeps } from '../../src/kb/collection-search.ts';
import type { ChunkRecord, CollectionRecord, DocumentRecord, NewChunk } from '../../src/kb/types.ts';
import type { ChunkContentType } from '../../src/retrieval/types.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';
import { seededRandom } from '../fixtures-gen/seeded-random.ts';

export interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A temporary folder removed on teardown (not test/helper.ts: it builds the whole app). */
export function tempDir(t: Teardown, prefix = 'kb-search-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export const rng = seededRandom;

/** Ordinary business words: every chunk is made of them, so they are the collection's common words. */
export const COMMON = (
  'market revenue growth quarter customer supply product service region policy budget forecast risk ' +
  'analysis segment margin contract partner network system design process quality audit report review ' +
  'training safety energy water transport logistics inventory pricing demand capacity research program ' +
  'project schedule resource vendor support platform security compliance finance operation strategy team'
).split(' ');

/** A sentence of `n` common words (deterministic per seed). */
export function filler(seed: number, n = 40): string {
  const r = rng(seed);
  const words = Array.from({ length: n }, () => COMMON[Math.floor(r() * COMMON.length)]!);
  words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
  return `${words.join(' ')}.`;
}

export interface ChunkSpec {
  text: string;
  heading_path?: string[];
  page?: number;
  content_type?: ChunkContentType;
}

export interface DocSpec {
  key: string;
  title?: string;
  language?: string;
  type?: string;
  chunks: ChunkSpec[];
  /** Characters each chunk repeats from the end of the previous one (as the chunker's overlap). */
  overlap?: number;
}

export interface SearchFixture {
  store: KbStore;
  collection: CollectionRecord;
  lexical: CollectionLexicalIndex;
  /** Commits a document (with one vector per chunk when given) and indexes its chunks lexically. */
  add(spec: DocSpec, vectors?: Float32Array[]): { doc: DocumentRecord; chunks: ChunkRecord[] };
  deps(extra?: Partial<CollectionSearchDeps>): CollectionSearchDeps;
}

export function openFixture(t: Teardown, name = 'library'): SearchFixture {
  const store = new KbStore(path.join(tempDir(t, 'kb-search-'), 'kb'));
  t.teardown(() => store.close());
  let collection = store.createCollection(name, null);
  const lexical = new CollectionLexicalIndex(new Analyzer());
  return {
    store,
    get collection() {
      return collection;
    },
    lexical,
    add(spec, vectors) {
      const doc = store.ensureDocument(collection.id, { source: spec.key, source_kind: 'url', source_key: spec.key, filename: null });
      const chunks: NewChunk[] = [];
      let content = '';
      const overlap = spec.overlap ?? 0;
      spec.chunks.forEach((c, ord) => {
        // The chunk text is content.slice(char_start, char_end); with overlap it starts inside the previous one.
        const carried = ord > 0 && overlap > 0 ? content.slice(Math.max(0, content.length - overlap)) : '';
        if (ord > 0 && !carried) content += '\n\n';
        const start = content.length - carried.length;
        content += c.text;
        const text = content.slice(start);
        chunks.push({
          ord,
          text,
          page_start: c.page ?? null,
          page_end: c.page ?? null,
          heading_path: c.heading_path ?? [],
          char_start: start,
          char_end: content.length,
          importance: 0.5,
          content_type: c.content_type ?? 'text',
        });
      });
      const commit = store.replaceDocument(collection.id, doc.id, {
        source: spec.key,
        source_kind: 'url',
        source_key: spec.key,
        filename: null,
        content_sha256: 'x'.repeat(64),
        bytes: content.length,
        type: spec.type ?? 'text',
        title: spec.title ?? null,
        pages: null,
        language: spec.language ?? 'en',
        job_id: null,
      }, chunks, vectors);
      lexical.remove(commit.removedChunkIds);
      lexical.add(commit.added.map((c) => ({ id: c.id, text: c.text, heading_path: c.heading_path })));
      collection = store.getCollection(name)!;
      return { doc: commit.document, chunks: commit.added };
    },
    deps(extra = {}) {
      return { collection, store, indexes: { lexical, dense: null }, models: null, ...extra };
    },
  };
}

/** A generated collection: `docs` documents of `perDoc` chunks of common words under two headings. */
export function fillCollection(fx: SearchFixture, docs: number, perDoc: number, seed = 1): void {
  for (let d = 0; d < docs; d++) {
    fx.add({
      key: `https://docs.example/report-${d}.pdf`,
      title: `Report ${d}`,
      chunks: Array.from({ length: perDoc }, (_, i) => ({
        text: filler(seed * 100_000 + d * 1000 + i),
        heading_path: [`Report ${d}`, i < perDoc / 2 ? 'Overview' : 'Details'],
        page: 1 + Math.floor(i / 4),
      })),
    });
  }
}

export const signal = () => new AbortController().signal;
