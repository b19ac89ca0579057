/**
 * retrieve_chunks answers with search_collection's fields (one ranking stage, src/kb/search-answer.ts):
 * confidence and message, total_chunks, timings_ms, reading context per hit and, with explain,
 * the confidence signals in the trace; the older fields stay.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import pino from 'pino';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import { RetrievalService } from '../../src/retrieval/retrieval-service.ts';
import type { DocumentAccess } from '../../src/retrieval/contracts.ts';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';
import type { DocumentSource } from '../../src/call-context.ts';
import { HANDBOOK_SECTIONS, handbookMarkdown } from '../fixtures-gen/texts.ts';

const log = pino({ level: 'silent' });
const URL = 'https://docs.example/handbook';
const doc: ProcessedDocument = { kind: 'docx', content: handbookMarkdown(), metadata: {}, tables: [], images: [], urls: [], pages: [] };
const sha = createHash('sha256').update(doc.content).digest('hex');
const access: DocumentAccess = {
  async fetch(source: DocumentSource) {
    return { url: 'url' in source ? source.url : '', sha256: sha, source: URL };
  },
  async load() {
    return { key: URL, contentSha256: sha, source: URL, doc };
  },
};
const ctx = () => ({ signal: new AbortController().signal, log });

t.test('confidence, message, total_chunks and timings_ms beside the older fields', async (t) => {
  const svc = new RetrievalService({ documents: access, caches: new CacheRegistry({ ttlMs: 60_000 }) });
  const res = await svc.retrieve({ sources: [{ url: URL }], query: 'separation of duties security administrator', topK: 3 }, ctx());
  t.ok(['low', 'medium', 'high'].includes(res.confidence), `a real match is not none (${res.confidence})`);
  t.type(res.message, 'string');
  t.equal(res.total_chunks, res.total_chunks_indexed);
  t.type(res.timings_ms.total_ms, 'number');
  t.type(res.timings_ms.load_ms, 'number');
  t.type(res.timings_ms.lexical_ms, 'number');
  t.type(res.timings_ms.confidence_ms, 'number');
  t.type(res.retrieval.timings.total_ms, 'number', 'retrieval.timings is kept');
  t.equal(res.results[0].context, undefined, 'no context unless asked');

  const none = await svc.retrieve({ sources: [{ url: URL }], query: 'zzqxv wqpfh', topK: 3 }, ctx());
  t.equal(none.confidence, 'none');
  t.match(none.message, /^Nothing in document "https:\/\/docs\.example\/handbook" matches/);
});

t.test('context: section and neighbors, as search_collection reads them', async (t) => {
  const svc = new RetrievalService({ documents: access, caches: new CacheRegistry({ ttlMs: 60_000 }) });
  const duties = HANDBOOK_SECTIONS.find((s) => s.heading.endsWith('Separation of duties'))!;
  for (const kind of ['section', 'neighbors'] as const) {
    const res = await svc.retrieve({ sources: [{ url: URL }], query: 'separation of duties security administrator', topK: 2, context: kind, contextChars: 3000 }, ctx());
    const hit = res.results[0];
    t.ok(hit.text.includes(duties.planted));
    t.equal(hit.context?.kind, kind);
    t.ok(hit.context!.chunk_indexes.includes(hit.chunk_index), 'the hit is part of its context');
    t.ok(hit.context!.text.includes(duties.planted), 'the context holds the hit');
    t.ok(hit.context!.text.length <= 3000);
    t.type(res.timings_ms.context_ms, 'number');
  }
});

t.test('explain: the trace carries the confidence signals', async (t) => {
  const svc = new RetrievalService({ documents: access, caches: new CacheRegistry({ ttlMs: 60_000 }) });
  const res = await svc.retrieve({ sources: [{ url: URL }], query: 'separation of duties', topK: 3, explain: true }, ctx());
  t.ok(res.trace);
  t.type(res.trace!.confidence?.coverage, 'number');
  t.same(res.trace!.confidence?.missing_terms, []);
  t.equal(res.trace!.candidates[0].source, URL);
});
