/**
 * The retriever layer is bounded by bytes as well as entries: each index reports approxBytes, and
 * storing past the byte bound evicts (and closes) the least recently used indexes.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import type { DocumentSource } from '../../src/call-context.ts';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';
import { RetrievalService } from '../../src/retrieval/retrieval-service.ts';
import type { DocumentAccess } from '../../src/retrieval/contracts.ts';

t.test('entries are counted by their approxBytes and evicted past max bytes', async (t) => {
  const caches = new CacheRegistry({ ttlMs: 60_000, retrieverMaxBytes: 1000 });
  const closed: string[] = [];
  const entry = (name: string, approxBytes: number) => ({ approxBytes, close: () => void closed.push(name) });
  caches.retriever.set('a', entry('a', 400));
  caches.retriever.set('b', entry('b', 400));
  t.match(caches.retriever.stats(), { entries: 2, bytes: 800, max_bytes: 1000, evictions: 0 });
  caches.retriever.get('a'); // a is now the most recently used
  caches.retriever.set('c', entry('c', 400));
  t.same(closed, ['b'], 'the least recently used index is evicted and closed');
  t.notOk(caches.retriever.has('b'));
  t.match(caches.retriever.stats(), { entries: 2, bytes: 800, evictions: 1 });
  t.equal(new CacheRegistry({ ttlMs: 60_000 }).retriever.stats().max_bytes, 512 * 1024 * 1024, 'bounded by default');
});

/** Distinct prose per document, so each index has its own vocabulary and size. */
function prose(seed: string, paragraphs: number): string {
  return Array.from({ length: paragraphs }, (_, i) => {
    const words = Array.from({ length: 60 }, (_, j) => createHash('md5').update(`${seed}-${i}-${j}`).digest('hex').slice(0, 7));
    return `Section ${i} of ${seed}. ${words.join(' ')}.`;
  }).join('\n\n');
}

t.test('real indexes: the retriever holds what fits in its byte bound and rebuilds what was evicted', async (t) => {
  const docs: Record<string, string> = { 'https://docs.example/a': prose('a', 40), 'https://docs.example/b': prose('b', 40) };
  const loads: string[] = [];
  const access: DocumentAccess = {
    async fetch(source: DocumentSource) {
      const url = 'url' in source ? source.url : '';
      return { url, sha256: createHash('sha256').update(docs[url]).digest('hex'), source: url };
    },
    async load(source: DocumentSource) {
      const url = 'url' in source ? source.url : '';
      loads.push(url);
      const doc: ProcessedDocument = { kind: 'text', content: docs[url], metadata: {}, tables: [], images: [], urls: [], pages: [] };
      return { key: url, contentSha256: '', source: url, doc };
    },
  };
  const ctx = { signal: new AbortController().signal };
  const search = (svc: RetrievalService, url: string) => svc.retrieve({ sources: [{ url }], query: 'section' }, ctx);

  // Measure one index, then bound the layer to one and a half of it.
  const probe = new CacheRegistry({ ttlMs: 60_000 });
  await search(new RetrievalService({ documents: access, caches: probe }), 'https://docs.example/a');
  const size = probe.retriever.stats().bytes;
  t.ok(size > 10_000, `an index reports its size (${size} bytes)`);

  const caches = new CacheRegistry({ ttlMs: 60_000, retrieverMaxBytes: Math.round(size * 1.5) });
  const svc = new RetrievalService({ documents: access, caches });
  t.equal((await search(svc, 'https://docs.example/a')).retrieval.documents[0].index, 'built');
  t.equal((await search(svc, 'https://docs.example/a')).retrieval.documents[0].index, 'memory');
  t.equal((await search(svc, 'https://docs.example/b')).retrieval.documents[0].index, 'built');
  t.match(caches.retriever.stats(), { entries: 1, evictions: 1 }, 'the second index pushed the first out');
  t.ok(caches.retriever.stats().bytes <= Math.round(size * 1.5));
  t.equal((await search(svc, 'https://docs.example/a')).retrieval.documents[0].index, 'built', 'the evicted index is rebuilt');
  t.same(loads, ['https://docs.example/a', 'https://docs.example/a', 'https://docs.example/b', 'https://docs.example/a']);
});
