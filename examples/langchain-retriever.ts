/**
 * LangChain.js over the REST API: a retriever (BaseRetriever) that returns the server's hits as
 * Documents, and two tools (DynamicStructuredTool from @langchain/core/tools) an agent can call.
 * The tools take JSON Schemas, so no zod is needed; `tool()` infers its input from a JSON Schema as
 * `unknown`, while DynamicStructuredTool keeps the typed input of its function.
 *
 * - Collection mode searches a knowledge-base collection (search_collection,
 *   POST /v1/collections/{name}/search), optionally with filters and each hit's parent section.
 * - Document mode searches one to ten documents by URL, indexed on the fly and cached by the
 *   server (retrieve_chunks, POST /v1/documents/retrieve).
 *
 * Each Document's metadata names where the text came from: document id, chunk id, page range,
 * heading path and score, so a chain can cite it.
 *
 * Run:  npx tsx examples/langchain-retriever.ts http://127.0.0.1:8000 --collection papers "multi-agent conversation"
 *       npx tsx examples/langchain-retriever.ts http://127.0.0.1:8000 --url https://example.org/report.pdf "revenue in 2023"
 */
import { parseArgs } from 'node:util';
import { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { DynamicStructuredTool } from '@langchain/core/tools';
import type { JSONSchema } from '@langchain/core/utils/json_schema';
import { isMain, runCli } from './client/cli.ts';
import { createRagClient, ok, type RagRestClient } from './client/rest-client.ts';
import { pageLabel, type RetrievedChunk, type SearchHit, type SearchRequest } from './client/wire-types.ts';

export interface RagDocumentMetadata {
  /** Collection mode: the document's id in the collection. Document mode: its URL. */
  document_id: string;
  /** Collection mode: the chunk's id. Document mode: its index in the document. */
  chunk_id: number;
  chunk_index: number;
  source: string;
  title: string | null;
  /** The first page (slide, sheet) of the chunk; null for formats without pages. */
  page: number | null;
  page_end: number | null;
  /** "p. 2", "pp. 2-3" or null. */
  pages: string | null;
  heading_path: string[];
  content_type: SearchHit['content_type'];
  score: number;
  /** Collection mode: the collection searched. */
  collection?: string;
  /** Collection mode with context: the parent text around the hit (its section or neighbours). */
  context?: string;
}

export type RagDocument = Document<RagDocumentMetadata>;

export interface RagConnection {
  /** The server's origin, e.g. http://127.0.0.1:8000 */
  server: string;
  /** Sent as `Authorization: Bearer` when the server has API_KEYS. */
  apiKey?: string;
  /** A ready client instead of server/apiKey. */
  client?: RagRestClient;
}

export interface RagRetrieverInput extends BaseRetrieverInput, RagConnection {
  /** Search this collection (collection mode)... */
  collection?: string;
  /** ...or these document URLs, at most 10 (document mode). */
  documentUrls?: string[];
  /** Documents per query (default 5). */
  topK?: number;
  /** Collection mode: filters, as search_collection takes them. */
  filters?: SearchRequest['filters'];
  /** Collection mode: add each hit's parent text to its metadata (default none). */
  context?: SearchRequest['context'];
}

const clientOf = (c: RagConnection): RagRestClient => c.client ?? createRagClient({ baseUrl: c.server, ...(c.apiKey ? { apiKey: c.apiKey } : {}) });

/** search_collection as Documents. */
export async function searchCollection(
  client: RagRestClient,
  collection: string,
  query: string,
  opts: { topK?: number; filters?: SearchRequest['filters']; context?: SearchRequest['context'] } = {},
): Promise<RagDocument[]> {
  const found = ok(
    await client.POST('/v1/collections/{name}/search', {
      params: { path: { name: collection } },
      body: {
        query,
        ...(opts.topK !== undefined ? { top_k: opts.topK } : {}),
        ...(opts.filters ? { filters: opts.filters } : {}),
        ...(opts.context ? { context: opts.context } : {}),
      },
    }),
  );
  return found.results.map((hit) => documentOfHit(hit, collection));
}

/** retrieve_chunks as Documents. */
export async function retrieveChunks(client: RagRestClient, documentUrls: string[], query: string, opts: { topK?: number } = {}): Promise<RagDocument[]> {
  const [only, ...more] = documentUrls;
  if (!only) throw new Error('retrieveChunks needs at least one document URL');
  const found = ok(
    await client.POST('/v1/documents/retrieve', {
      body: { ...(more.length ? { document_urls: documentUrls } : { document_url: only }), query, ...(opts.topK !== undefined ? { top_k: opts.topK } : {}) },
    }),
  );
  return found.results.map(documentOfChunk);
}

function documentOfHit(hit: SearchHit, collection: string): RagDocument {
  return new Document({
    pageContent: hit.text,
    id: `${hit.document_id}:${hit.chunk_id}`,
    metadata: {
      document_id: hit.document_id,
      chunk_id: hit.chunk_id,
      chunk_index: hit.chunk_index,
      source: hit.source,
      title: hit.title,
      page: hit.page_start,
      page_end: hit.page_end,
      pages: pageLabel(hit.page_start, hit.page_end),
      heading_path: hit.heading_path,
      content_type: hit.content_type,
      score: hit.score,
      collection,
      ...(hit.context ? { context: hit.context.text } : {}),
    },
  });
}

function documentOfChunk(chunk: RetrievedChunk): RagDocument {
  return new Document({
    pageContent: chunk.text,
    id: `${chunk.source}#${chunk.chunk_index}`,
    metadata: {
      document_id: chunk.source,
      chunk_id: chunk.chunk_index,
      chunk_index: chunk.chunk_index,
      source: chunk.source,
      title: null,
      page: chunk.page_start,
      page_end: chunk.page_end,
      pages: pageLabel(chunk.page_start, chunk.page_end),
      heading_path: chunk.heading_path,
      content_type: chunk.content_type,
      score: chunk.score,
    },
  });
}

/** A LangChain retriever over one collection or a set of document URLs. */
export class RagServerRetriever extends BaseRetriever<RagDocumentMetadata> {
  static lc_name() {
    return 'RagServerRetriever';
  }

  lc_namespace = ['rag-document-server', 'retrievers'];

  private readonly client: RagRestClient;
  private readonly collection: string | undefined;
  private readonly documentUrls: string[] | undefined;
  private readonly topK: number | undefined;
  private readonly filters: SearchRequest['filters'];
  private readonly contextKind: SearchRequest['context'];

  constructor(fields: RagRetrieverInput) {
    super(fields);
    if ((fields.collection === undefined) === (fields.documentUrls === undefined)) {
      throw new Error('RagServerRetriever: give either collection or documentUrls');
    }
    this.client = clientOf(fields);
    this.collection = fields.collection;
    this.documentUrls = fields.documentUrls;
    this.topK = fields.topK;
    this.filters = fields.filters;
    this.contextKind = fields.context;
  }

  async _getRelevantDocuments(query: string): Promise<RagDocument[]> {
    const topK = this.topK !== undefined ? { topK: this.topK } : {};
    if (this.collection !== undefined) {
      return searchCollection(this.client, this.collection, query, {
        ...topK,
        ...(this.filters ? { filters: this.filters } : {}),
        ...(this.contextKind ? { context: this.contextKind } : {}),
      });
    }
    return retrieveChunks(this.client, this.documentUrls!, query, topK);
  }
}

/** Numbered passages with their citations: what a tool hands back to a model. */
export function formatDocuments(docs: RagDocument[]): string {
  if (docs.length === 0) return 'Nothing relevant was found.';
  return docs
    .map((d, i) => {
      const m = d.metadata;
      const where = [m.title ?? m.source, m.pages, m.heading_path.join(' > ') || null].filter(Boolean).join(', ');
      return `[${i + 1}] ${where} (document ${m.document_id}, chunk ${m.chunk_id}, score ${m.score.toFixed(3)})\n${d.pageContent}`;
    })
    .join('\n\n');
}

/**
 * search_collection as a LangChain tool. Its content is the numbered passages for the model; its
 * artifact the Documents, for the program (responseFormat "content_and_artifact").
 */
export function createSearchCollectionTool(conn: RagConnection) {
  const client = clientOf(conn);
  return new DynamicStructuredTool({
    name: 'search_collection',
    description:
      'Search every document of a knowledge-base collection for the passages most relevant to a query. ' +
      'Each passage names its document, page range and heading path; cite them as [n].',
    schema: {
      type: 'object',
      properties: {
        collection: { type: 'string', description: 'Collection name' },
        query: { type: 'string', description: 'What to look for, in words' },
        top_k: { type: 'integer', minimum: 1, maximum: 100, description: 'Passages to return (default 5)' },
      },
      required: ['collection', 'query'],
      additionalProperties: false,
    } satisfies JSONSchema,
    responseFormat: 'content_and_artifact',
    func: async (input: { collection: string; query: string; top_k?: number }): Promise<[string, RagDocument[]]> => {
      const docs = await searchCollection(client, input.collection, input.query, {
        ...(input.top_k !== undefined ? { topK: input.top_k } : {}),
        context: 'section',
      });
      return [formatDocuments(docs), docs];
    },
  });
}

/** retrieve_chunks as a LangChain tool: the passages of documents given by URL. */
export function createRetrieveChunksTool(conn: RagConnection) {
  const client = clientOf(conn);
  return new DynamicStructuredTool({
    name: 'retrieve_chunks',
    description:
      'Find the passages of one to ten documents (http(s) URLs: PDF, Word, PowerPoint, spreadsheets, HTML, text) most relevant to a query. ' +
      'Each passage names its document and page range; cite them as [n].',
    schema: {
      type: 'object',
      properties: {
        document_urls: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 10, description: 'http(s) URLs of the documents' },
        query: { type: 'string', description: 'What to look for, in words' },
        top_k: { type: 'integer', minimum: 1, maximum: 20, description: 'Passages to return (default 5)' },
      },
      required: ['document_urls', 'query'],
      additionalProperties: false,
    } satisfies JSONSchema,
    responseFormat: 'content_and_artifact',
    func: async (input: { document_urls: string[]; query: string; top_k?: number }): Promise<[string, RagDocument[]]> => {
      const docs = await retrieveChunks(client, input.document_urls, input.query, input.top_k !== undefined ? { topK: input.top_k } : {});
      return [formatDocuments(docs), docs];
    },
  });
}

const USAGE = 'usage: npx tsx examples/langchain-retriever.ts <server-url> (--collection NAME | --url URL...) [--api-key KEY] [--top-k N] <question>';

/** The command line: retrieves with RagServerRetriever and prints the Documents. */
export async function main(argv: string[] = process.argv.slice(2), log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<RagDocument[]> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      collection: { type: 'string' },
      url: { type: 'string', multiple: true },
      'api-key': { type: 'string' },
      'top-k': { type: 'string' },
    },
  });
  const [server, ...words] = positionals;
  if (!server || words.length === 0 || (values.collection === undefined) === (values.url === undefined)) throw new Error(USAGE);
  const apiKey = values['api-key'] ?? process.env.RAG_API_KEY;
  const retriever = new RagServerRetriever({
    server,
    ...(apiKey ? { apiKey } : {}),
    ...(values.collection !== undefined ? { collection: values.collection } : { documentUrls: values.url! }),
    ...(values['top-k'] ? { topK: Number(values['top-k']) } : {}),
  });
  const docs = await retriever.invoke(words.join(' '));
  log(formatDocuments(docs));
  return docs;
}

if (isMain(import.meta.url)) runCli(main);
