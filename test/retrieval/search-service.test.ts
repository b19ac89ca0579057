import t from 'tap';
import path from 'node:path';
import os from 'node:os';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import pino from 'pino';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import { IndexStore } from '../../src/retrieval/store/index-store.ts';
import type { ModelManager } from '../../src/retrieval/models/model-manager.ts';
import { RetrievalService } from '../../src/retrieval/retrieval-service.ts';
import type { DocumentAccess, ModelLayer, IndexPersistence } from '../../src/retrieval/contracts.ts';
import { chunkDocument } from '../../src/retrieval/chunking.ts';
import type { Embedder, RerankOutcome } from '../../src/retrieval/types.ts';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';
import type { DocumentSource } from '../../src/call-context.ts';
import { isToolError } from '../../src/errors.ts';
import { declarationText, HANDBOOK_SECTIONS, handbookMarkdown } from '../fixtures-gen/texts.ts';

// The real model layer and store satisfy the service's seams (checked by the compiler).
export const seams: [(m: ModelManager) => ModelLayer, (s: IndexStore) => IndexPersistence] = [(m) => m, (s) => s];

// Generated documents (test/corpus/retrieval/search-service.test.ts runs on the real ones).
const md = handbookMarkdown();
const udhr = declarationText();
const log = pino({ level: 'silent' });

function docOf(kind: ProcessedDocument['kind'], content: string): ProcessedDocument {
  return { kind, content, metadata: {}, tables: [], images: [], urls: [], pages: [] };
}

/** Serves documents from memory and counts what the pipeline asks for. */
function library(docs: Record<string, ProcessedDocument>) {
  const calls = { fetch: 0, load: 0 };
  const access: DocumentAccess = {
    async fetch(source: DocumentSource) {
      calls.fetch++;
      const url = 'url' in source ? source.url : '';
      const doc = docs[url];
      if (!doc) throw new Error(`no document ${url}`);
      return { url, sha256: createHash('sha256').update(doc.content).digest('hex'), source: url };
    },
    async load(source: DocumentSource) {
      calls.load++;
      await new Promise((r) => setTimeout(r, 20)); // extraction takes time: lets concurrent calls pile up
      const url = 'url' in source ? source.url : '';
      const doc = docs[url];
      return { key: url, contentSha256: createHash('sha256').update(doc.content).digest('hex'), source: url, doc };
    },
  };
  return { access, calls };
}

/**
 * Feature hashing of stemmed-ish lower-case words into 256 dimensions, L2-normalised: a real,
 * deterministic text embedding (no neural model), enough to exercise dense indexing end to end.
 */
function hashingEmbedder(): Embedder & { calls: number } {
  const dim = 256;
  const e = {
    id: 'test:hashing-256',
    dimension: dim,
    calls: 0,
    async embed(texts: string[]): Promise<Float32Array[]> {
      e.calls++;
      return texts.map((text) => {
        const v = new Float32Array(dim);
        for (const w of text.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []) {
          const h = createHash('md5').update(w.slice(0, 6)).digest();
          v[h[0] % dim] += h[1] & 1 ? 1 : -1;
        }
        const n = Math.hypot(...v) || 1;
        return v.map((x) => x / n);
      });
    },
  };
  return e;
}

function modelLayer(embedder: Embedder | null, rerank?: (q: string, p: string[]) => Promise<RerankOutcome>): ModelLayer {
  return {
    embedderFor: () => embedder,
    embedderById: (id) => (embedder && embedder.id === id ? embedder : null),
    denseUnavailableReason: () => (embedder ? null : 'no embedding model in the test'),
    rerank: rerank ?? (async () => ({ status: 'unavailable', reason: 'none' })),
    rerankerId: () => (rerank ? 'test:reranker' : null),
    rerankerUnavailableReason: () => (rerank ? '' : 'no reranker in the test'),
  };
}

const ctx = () => ({ signal: new AbortController().signal, log });
const caches = () => new CacheRegistry({ ttlMs: 60_000 });
const REDBOOK = 'https://docs.example/redbook';
const UDHR = 'https://docs.example/udhr';

t.test('lexical retrieval over a sectioned document, and why it is lexical', async (t) => {
  const lib = library({ [REDBOOK]: docOf('docx', md) });
  const svc = new RetrievalService({ documents: lib.access, caches: caches() });
  const res = await svc.retrieve({ sources: [{ url: REDBOOK }], query: 'separation of duties security administrator', topK: 3 }, ctx());
  t.equal(res.total_chunks_indexed, chunkDocument(docOf('docx', md)).length);
  t.equal(res.results.length, 3);
  const duties = HANDBOOK_SECTIONS.find((s) => s.heading.endsWith('Separation of duties'))!;
  t.ok(res.results[0].text.includes(duties.planted), 'the chunk with the section\'s sentence ranks first');
  t.same(res.results[0].heading_path, duties.path);
  t.equal(res.results[0].source, REDBOOK);
  t.equal(res.retrieval.mode, 'lexical');
  t.equal(res.retrieval.embedder, null);
  t.match(res.retrieval.reason, /no embedding model is configured/);
  t.equal(res.retrieval.reranker, 'unavailable');
  t.equal(res.retrieval.documents[0].index, 'built');
  t.ok(res.results.every((r, i) => i === 0 || r.score <= res.results[i - 1].score));

  const again = await svc.retrieve({ sources: [{ url: REDBOOK }], query: 'column mask', topK: 50 }, ctx());
  t.equal(again.retrieval.documents[0].index, 'memory');
  t.equal(again.retrieval.top_k, 20, 'top_k is clamped to 20');
  t.equal(lib.calls.load, 1);
});

t.test('ten concurrent calls for a new document build it once', async (t) => {
  const lib = library({ [REDBOOK]: docOf('docx', md) });
  const svc = new RetrievalService({ documents: lib.access, caches: caches() });
  const all = await Promise.all(Array.from({ length: 10 }, () => svc.retrieve({ sources: [{ url: REDBOOK }], query: 'RCAC row permission' }, ctx())));
  t.equal(lib.calls.load, 1);
  t.equal(svc.stats().built, 1);
  t.ok(all.every((r) => JSON.stringify(r.results) === JSON.stringify(all[0].results)));
});

t.test('dense and hybrid need an embedder: MODEL_UNAVAILABLE otherwise', async (t) => {
  const lib = library({ [REDBOOK]: docOf('docx', md) });
  const svc = new RetrievalService({ documents: lib.access, caches: caches(), models: modelLayer(null) });
  for (const mode of ['dense', 'hybrid'] as const) {
    const err = await svc.retrieve({ sources: [{ url: REDBOOK }], query: 'security', mode }, ctx()).catch((e) => e);
    t.ok(isToolError(err) && err.code === 'MODEL_UNAVAILABLE', `${mode}: ${err.message}`);
    t.match(err.message, /no embedding model in the test/);
  }
  const lexical = await svc.retrieve({ sources: [{ url: REDBOOK }], query: 'security' }, ctx());
  t.match(lexical.retrieval.reason, /no embedding model in the test/);
});

t.test('hybrid with an embedder, persisted; a restarted service answers from disk without re-embedding', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rag-retrieval-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const embedder = hashingEmbedder();
  const lib = library({ [REDBOOK]: docOf('docx', md) });
  const first = new RetrievalService({ documents: lib.access, caches: caches(), models: modelLayer(embedder), store: new IndexStore({ dir }) });
  const a = await first.retrieve({ sources: [{ url: REDBOOK }], query: 'database security administrator duties', topK: 5, explain: true }, ctx());
  t.equal(a.retrieval.mode, 'hybrid');
  t.equal(a.retrieval.embedder, 'test:hashing-256');
  t.equal(a.retrieval.documents[0].index, 'built');
  t.equal(first.stats().embedded_chunks, a.total_chunks_indexed);
  t.same(a.trace!.stages, ['lexical', 'dense', 'fusion', 'diversity', 'top_k']);
  t.ok(a.trace!.candidates.every((c) => c.source === REDBOOK && typeof c.chunk_index === 'number'));
  t.ok(a.trace!.candidates.some((c) => c.dense_rank !== null && c.lexical_rank !== null));
  t.type(a.retrieval.timings.dense_ms, 'number');
  t.type(a.retrieval.timings.fusion_ms, 'number');

  const embedCalls = embedder.calls;
  const restarted = new RetrievalService({ documents: lib.access, caches: caches(), models: modelLayer(embedder), store: new IndexStore({ dir }) });
  const b = await restarted.retrieve({ sources: [{ url: REDBOOK }], query: 'database security administrator duties', topK: 5, explain: true }, ctx());
  t.equal(b.retrieval.documents[0].index, 'disk');
  t.equal(lib.calls.load, 1, 'no extraction after the restart');
  t.equal(embedder.calls, embedCalls + 1, 'only the query was embedded');
  t.equal(restarted.stats().embedded_chunks, 0);
  t.same(b.results, a.results);

  const dense = await restarted.retrieve({ sources: [{ url: REDBOOK }], query: 'database security administrator duties', mode: 'dense' }, ctx());
  t.equal(dense.retrieval.mode, 'dense');
  t.ok(dense.results.length > 0);
});

t.test('reranker: used when present, skipped on request', async (t) => {
  const lib = library({ [REDBOOK]: docOf('docx', md) });
  // Scores passages by how often "mask" occurs: a real, checkable scoring function.
  const rerank = async (_q: string, passages: string[]): Promise<RerankOutcome> => ({ status: 'used', scores: passages.map((p) => (p.match(/mask/gi) ?? []).length) });
  const svc = new RetrievalService({ documents: lib.access, caches: caches(), models: modelLayer(null, rerank) });
  const used = await svc.retrieve({ sources: [{ url: REDBOOK }], query: 'column mask permission', topK: 3, explain: true }, ctx());
  t.equal(used.retrieval.reranker, 'used');
  t.equal(used.retrieval.reranker_model, 'test:reranker');
  t.ok(used.results[0].score >= used.results[1].score);
  t.ok(used.trace!.candidates.some((c) => c.rerank_delta !== null));
  const skipped = await svc.retrieve({ sources: [{ url: REDBOOK }], query: 'column mask permission', topK: 3, rerank: false }, ctx());
  t.equal(skipped.retrieval.reranker, 'skipped');
  t.match(skipped.retrieval.reranker_reason, /rerank: false/);
});

t.test('several documents at once: each result names its source', async (t) => {
  const lib = library({ [REDBOOK]: docOf('docx', md), [UDHR]: docOf('text', udhr) });
  const svc = new RetrievalService({ documents: lib.access, caches: caches() });
  const res = await svc.retrieve({ sources: [{ url: REDBOOK }, { url: UDHR }, { url: REDBOOK }], query: 'human beings born free equal dignity rights', topK: 5 }, ctx());
  t.equal(res.retrieval.documents.length, 2, 'a repeated document is searched once');
  t.equal(res.results[0].source, UDHR);
  t.ok(res.results.some((r) => r.source === UDHR));
  const sec = await svc.retrieve({ sources: [{ url: REDBOOK }, { url: UDHR }], query: 'QIBM_DB_SECADM function usage', topK: 2 }, ctx());
  t.equal(sec.results[0].source, REDBOOK);
  t.ok(sec.results[0].text.includes('QIBM_DB_SECADM'), 'the chunk naming the identifier');
  t.equal(sec.total_chunks_indexed, res.total_chunks_indexed);
});

t.test('bad requests are coded errors', async (t) => {
  const lib = library({ [REDBOOK]: docOf('docx', md) });
  const svc = new RetrievalService({ documents: lib.access, caches: caches() });
  const code = async (p: Promise<unknown>) => ((await p.catch((e: unknown) => e)) as { code?: string }).code;
  t.equal(await code(svc.retrieve({ sources: [], query: 'x' }, ctx())), 'VALIDATION_ERROR');
  t.equal(await code(svc.retrieve({ sources: [{ url: REDBOOK }], query: '   ' }, ctx())), 'VALIDATION_ERROR');
  t.equal(await code(svc.retrieve({ sources: Array.from({ length: 11 }, () => ({ url: REDBOOK })), query: 'x' }, ctx())), 'VALIDATION_ERROR');
});

t.test('an empty document indexes to zero chunks and answers with none', async (t) => {
  const lib = library({ 'https://docs.example/empty': docOf('text', '') });
  const svc = new RetrievalService({ documents: lib.access, caches: caches() });
  const res = await svc.retrieve({ sources: [{ url: 'https://docs.example/empty' }], query: 'anything' }, ctx());
  t.same(res.results, []);
  t.equal(res.total_chunks_indexed, 0);
  const chunked = await svc.chunk({ url: 'https://docs.example/empty' }, ctx());
  t.same(chunked.chunks, []);
});
