import t from 'tap';
import { createHash } from 'node:crypto';
import pino from 'pino';
import Value from 'typebox/value';
import { CacheRegistry } from '../../src/cache/cache-registry.ts';
import { RetrievalService } from '../../src/retrieval/retrieval-service.ts';
import type { DocumentAccess } from '../../src/retrieval/contracts.ts';
import { chunkDocumentTool } from '../../src/tools/chunk-document.ts';
import { retrieveChunksTool } from '../../src/tools/retrieve-chunks.ts';
import type { ToolContext } from '../../src/tools/define-tool.ts';
import type { ProcessedDocument } from '../../src/extractors/shared/types.ts';
import type { DocumentSource } from '../../src/call-context.ts';
import { HANDBOOK_SECTIONS, handbookMarkdown } from '../fixtures-gen/texts.ts';

const md = handbookMarkdown();
const URL_A = 'https://docs.example/redbook.pdf';

// A PDF-shaped document: the Markdown split into three "pages" with a page map.
function pdfDoc(): ProcessedDocument {
  const third = Math.floor(md.length / 3);
  const cuts = [0, md.indexOf('\n\n', third), md.indexOf('\n\n', 2 * third), md.length];
  let content = '';
  const pages = [];
  for (let i = 0; i < 3; i++) {
    const start = content.length;
    content += `--- Page ${i + 1} ---\n\n${md.slice(cuts[i], cuts[i + 1]).trim()}\n\n`;
    pages.push({ number: i + 1, unit: 'page' as const, start, end: content.length });
  }
  return { kind: 'pdf', content, metadata: {}, tables: [], images: [], urls: [], pages };
}

const doc = pdfDoc();
const access: DocumentAccess = {
  async fetch(source: DocumentSource) {
    if ('upload' in source) return { sha256: createHash('sha256').update(source.upload.bytes).digest('hex'), source: 'upload:notes.txt' };
    return { url: source.url, sha256: createHash('sha256').update(doc.content).digest('hex'), source: source.url };
  },
  async load(source: DocumentSource) {
    if ('upload' in source) {
      const text = source.upload.bytes.toString('utf8');
      return { key: 'u', contentSha256: '', source: 'upload:notes.txt', doc: { kind: 'text', content: text, metadata: {}, tables: [], images: [], urls: [], pages: [] } };
    }
    return { key: 'k', contentSha256: '', source: source.url, doc };
  },
};

function ctx(extra: Partial<ToolContext> = {}): ToolContext {
  const services = { retrieval: new RetrievalService({ documents: access, caches: new CacheRegistry({ ttlMs: 60_000 }) }) };
  return { signal: new AbortController().signal, log: pino({ level: 'silent' }), requestId: 'test', services, ...extra } as unknown as ToolContext;
}

t.test('chunk_document: declared once with its REST binding; output matches its schema', async (t) => {
  t.equal(chunkDocumentTool.rest.path, '/v1/documents/chunk');
  t.equal(chunkDocumentTool.timeoutClass, 'document');
  t.same(chunkDocumentTool.upload, { urlField: 'document_url' });
  t.notOk(Value.Check(chunkDocumentTool.input, { document_url: URL_A, extra: 1 }), 'unknown fields are refused');
  const out = await chunkDocumentTool.handler({ document_url: URL_A }, ctx());
  t.ok(Value.Check(chunkDocumentTool.output, out), JSON.stringify([...Value.Errors(chunkDocumentTool.output, out)][0] ?? null));
  t.equal(out.document_type, 'pdf');
  t.equal(out.chunk_count, out.chunks.length);
  t.equal(out.truncated, false);
  t.same([...new Set(out.chunks.map((c) => c.page_start))], [1, 2, 3]);
  t.ok(out.chunks.every((c) => doc.content.slice(c.char_start, c.char_end) === c.text));
  const few = await chunkDocumentTool.handler({ document_url: URL_A, max_chunks: 2 }, ctx());
  t.equal(few.chunks.length, 2);
  t.equal(few.truncated, true);
  t.equal(few.chunk_count, out.chunk_count);
});

t.test('retrieve_chunks: input rules, output schema, pages and sources', async (t) => {
  t.equal(retrieveChunksTool.rest.path, '/v1/documents/retrieve');
  const I = retrieveChunksTool.input;
  t.ok(Value.Check(I, { document_url: URL_A, query: 'x' }));
  t.notOk(Value.Check(I, { document_url: URL_A, query: '' }), 'empty query');
  t.notOk(Value.Check(I, { document_url: URL_A, query: 'q'.repeat(2001) }), 'query over 2000 chars');
  t.notOk(Value.Check(I, { document_url: URL_A, query: 'x', top_k: 21 }));
  t.notOk(Value.Check(I, { document_url: URL_A, query: 'x', top_k: 0 }));
  t.notOk(Value.Check(I, { document_url: URL_A, query: 'x', mode: 'semantic' }));
  t.notOk(Value.Check(I, { document_urls: Array.from({ length: 11 }, () => URL_A), query: 'x' }));
  t.notOk(Value.Check(I, { document_url: URL_A, query: 'x', extra: true }));

  // Rare words pick the section; common ones ("access", "policy") match many chunks, so five come back.
  const out = await retrieveChunksTool.handler({ document_url: URL_A, query: 'separation of duties access policy', explain: true }, ctx());
  t.ok(Value.Check(retrieveChunksTool.output, out), JSON.stringify([...Value.Errors(retrieveChunksTool.output, out)][0] ?? null));
  t.equal(out.results.length, 5);
  t.ok(out.results[0].text.includes(HANDBOOK_SECTIONS.find((s) => s.heading.endsWith('Separation of duties'))!.planted), 'the section on separation of duties first');
  t.equal(out.retrieval.mode, 'lexical');
  t.ok(out.results.every((r) => r.source === URL_A && r.page_start !== null && r.page_end! >= r.page_start!));
  t.ok(out.trace!.candidates.length >= out.results.length);

  const many = await retrieveChunksTool.handler({ document_urls: [URL_A, `${URL_A}?copy`], query: 'column masks', top_k: 4 }, ctx());
  t.ok(Value.Check(retrieveChunksTool.output, many));
  t.same(many.retrieval.documents.map((d) => d.source), [URL_A, `${URL_A}?copy`]);
  t.equal(many.total_chunks_indexed, 2 * out.total_chunks_indexed);
  // identical content under two URLs: the diversity filter keeps one copy of each chunk
  t.equal(new Set(many.results.map((r) => r.text)).size, many.results.length);
});

t.test('retrieve_chunks: source selection errors and uploads', async (t) => {
  const code = async (p: Promise<unknown>) => ((await p.catch((e: unknown) => e)) as { code?: string }).code;
  t.equal(await code(retrieveChunksTool.handler({ query: 'x' }, ctx())), 'VALIDATION_ERROR');
  t.equal(await code(retrieveChunksTool.handler({ document_url: URL_A, document_urls: [URL_A], query: 'x' }, ctx())), 'VALIDATION_ERROR');
  const upload = { bytes: Buffer.from('Meeting notes.\n\nThe budget for 2025 is 40,000 EUR and the deadline is March.\n\nLunch was pizza.'), filename: 'notes.txt' };
  t.equal(await code(retrieveChunksTool.handler({ document_urls: [URL_A], query: 'x' }, ctx({ upload }))), 'VALIDATION_ERROR');
  const out = await retrieveChunksTool.handler({ query: 'budget deadline', top_k: 1 }, ctx({ upload }));
  t.equal(out.results[0].source, 'upload:notes.txt');
  t.match(out.results[0].text, /budget for 2025/);
});
