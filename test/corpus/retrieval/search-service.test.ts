/**
 * RetrievalService over real documents from the corpus: the IBM Redbook's Markdown and the UDHR in
 * hundreds of languages (test/retrieval/search-service.test.ts covers the service on generated text).
 */
import { createHash } from 'node:crypto';
import pino from 'pino';
import t from 'tap';
import { CacheRegistry } from '../../../src/cache/cache-registry.ts';
import type { DocumentSource } from '../../../src/call-context.ts';
import type { ProcessedDocument } from '../../../src/extractors/shared/types.ts';
import { chunkDocument } from '../../../src/retrieval/chunking.ts';
import { RetrievalService } from '../../../src/retrieval/retrieval-service.ts';
import type { DocumentAccess } from '../../../src/retrieval/contracts.ts';
import { readCorpusText } from '../data-dirs.ts';

const md = readCorpusText('pdf/redp5110_sampled.pdf.expected.md');
const udhr = readCorpusText('txt/UDHR_first_article_all.txt');
const log = pino({ level: 'silent' });
const REDBOOK = 'https://docs.example/redbook';
const UDHR = 'https://docs.example/udhr';

function docOf(kind: ProcessedDocument['kind'], content: string): ProcessedDocument {
  return { kind, content, metadata: {}, tables: [], images: [], urls: [], pages: [] };
}

function library(docs: Record<string, ProcessedDocument>) {
  const calls = { load: 0 };
  const sha = (url: string) => createHash('sha256').update(docs[url]!.content).digest('hex');
  const access: DocumentAccess = {
    async fetch(source: DocumentSource) {
      const url = 'url' in source ? source.url : '';
      return { url, sha256: sha(url), source: url };
    },
    async load(source: DocumentSource) {
      calls.load++;
      const url = 'url' in source ? source.url : '';
      return { key: url, contentSha256: sha(url), source: url, doc: docs[url]! };
    },
  };
  return { access, calls };
}

const ctx = () => ({ signal: new AbortController().signal, log });
const service = (docs: Record<string, ProcessedDocument>) => {
  const lib = library(docs);
  return { lib, svc: new RetrievalService({ documents: lib.access, caches: new CacheRegistry({ ttlMs: 60_000 }) }) };
};

t.test('lexical retrieval over a real document, and why it is lexical', async (t) => {
  const { lib, svc } = service({ [REDBOOK]: docOf('docx', md) });
  const res = await svc.retrieve({ sources: [{ url: REDBOOK }], query: 'separation of duties security administrator', topK: 3 }, ctx());
  t.equal(res.total_chunks_indexed, chunkDocument(docOf('docx', md)).length);
  t.equal(res.results.length, 3);
  t.match(res.results[0].text, /[Ss]eparation of duties/);
  t.ok(res.results[0].heading_path.some((h) => /Separation of duties/.test(h)));
  t.equal(res.results[0].source, REDBOOK);
  t.equal(res.retrieval.mode, 'lexical');
  t.match(res.retrieval.reason, /no embedding model is configured/);
  t.ok(res.results.every((r, i) => i === 0 || r.score <= res.results[i - 1].score));

  const again = await svc.retrieve({ sources: [{ url: REDBOOK }], query: 'column mask', topK: 50 }, ctx());
  t.equal(again.retrieval.documents[0].index, 'memory');
  t.equal(again.retrieval.top_k, 20, 'top_k is clamped to 20');
  t.match(again.results[0].text, /[Mm]ask/);
  t.equal(lib.calls.load, 1);
});

t.test('several real documents at once: each result names its source', async (t) => {
  const { svc } = service({ [REDBOOK]: docOf('docx', md), [UDHR]: docOf('text', udhr) });
  const res = await svc.retrieve({ sources: [{ url: REDBOOK }, { url: UDHR }, { url: REDBOOK }], query: 'human beings born free equal dignity rights', topK: 5 }, ctx());
  t.equal(res.retrieval.documents.length, 2, 'a repeated document is searched once');
  t.equal(res.results[0].source, UDHR);
  const sec = await svc.retrieve({ sources: [{ url: REDBOOK }, { url: UDHR }], query: 'QIBM_DB_SECADM function usage', topK: 2 }, ctx());
  t.equal(sec.results[0].source, REDBOOK);
  t.equal(sec.total_chunks_indexed, res.total_chunks_indexed);
});
