/**
 * examples/langchain-retriever.ts against the real server over REST: the retriever in collection
 * mode (search_collection) and in document-URL mode (retrieve_chunks) returns Documents whose
 * metadata cites the page; the tools return the passages as text with the Documents as artifact.
 */
import t from 'tap';
import { ToolMessage } from '@langchain/core/messages';
import { createRetrieveChunksTool, createSearchCollectionTool, main, RagServerRetriever } from '../../examples/langchain-retriever.ts';
import { API_KEY, examplesWorld, HARBOUR_PDF, ingestFolder } from './examples-world.ts';

t.test('retriever, collection mode: search_collection as Documents', async (t) => {
  const world = await examplesWorld(t);
  await ingestFolder(world, 'lc-notes');

  const retriever = new RagServerRetriever({ server: world.server, apiKey: API_KEY, collection: 'lc-notes', topK: 3, context: 'section' });
  const docs = await retriever.invoke('Which crane received a new hydraulic hose?');
  t.ok(docs.length >= 1 && docs.length <= 3, `${docs.length} documents`);
  const top = docs[0]!;
  t.match(top.pageContent, /hydraulic hose/);
  t.match(top.metadata, { collection: 'lc-notes', title: HARBOUR_PDF.title, page: 2, content_type: 'text' });
  t.match(top.metadata.source, /harbour\.pdf$/);
  t.match(top.metadata.document_id, /\S/);
  t.type(top.metadata.chunk_id, 'number');
  t.type(top.metadata.score, 'number');
  t.match(top.metadata.pages, /^pp?\. 2/);
  t.type(top.metadata.context, 'string', 'the parent section came along');
  t.equal(top.id, `${top.metadata.document_id}:${top.metadata.chunk_id}`);

  const filtered = await new RagServerRetriever({
    server: world.server,
    apiKey: API_KEY,
    collection: 'lc-notes',
    filters: { page_from: 3 },
  }).invoke('hydraulic hose');
  t.ok(filtered.every((d) => (d.metadata.page_end ?? 0) >= 3), 'filters reach the server');

  const missing = await new RagServerRetriever({ server: world.server, apiKey: API_KEY, collection: 'no-such' }).invoke('x').catch((e: unknown) => e);
  t.match(missing, { name: 'RagApiError', status: 404, code: 'NOT_FOUND' });
  const noKey = await new RagServerRetriever({ server: world.server, collection: 'lc-notes' }).invoke('x').catch((e: unknown) => e);
  t.match(noKey, { status: 401, code: 'UNAUTHORIZED' });
});

t.test('retriever, document mode: retrieve_chunks over URLs', async (t) => {
  const world = await examplesWorld(t);
  const urls = [world.url('harbour.pdf'), world.url('otters.md')];
  const docs = await new RagServerRetriever({ server: world.server, apiKey: API_KEY, documentUrls: urls, topK: 2 }).invoke('otters hold hands sleeping drift');
  t.ok(docs.length >= 1);
  t.equal(docs[0]!.metadata.source, urls[1], 'the markdown note answers');
  t.equal(docs[0]!.metadata.document_id, urls[1]);
  t.equal(docs[0]!.metadata.page, null, 'markdown has no pages');

  const one = await new RagServerRetriever({ server: world.server, apiKey: API_KEY, documentUrls: [urls[0]!] }).invoke('spring tides upper quay');
  t.equal(one[0]!.metadata.page, 3, 'the tides are on page 3');

  t.throws(() => new RagServerRetriever({ server: world.server }), /either collection or documentUrls/);
});

t.test('tools and the CLI', async (t) => {
  const world = await examplesWorld(t);
  await ingestFolder(world, 'lc-tools');

  const search = createSearchCollectionTool({ server: world.server, apiKey: API_KEY });
  t.equal(search.name, 'search_collection');
  // A model's tool call: the answer is a ToolMessage with the text for the model and the Documents.
  const msg: unknown = await search.invoke({ type: 'tool_call', id: 'call-1', name: 'search_collection', args: { collection: 'lc-tools', query: 'sourdough wild yeast', top_k: 2 } });
  t.ok(msg instanceof ToolMessage);
  const message = msg as ToolMessage;
  // The citation names the title (a plain-text first line standing alone is one) or the file.
  t.match(String(message.content), /^\[1\] (Sourdough bread|.*bread\.txt)/);
  const artifact = message.artifact as Array<{ metadata: { source: string } }>;
  t.match(artifact[0]!.metadata.source, /bread\.txt$/);

  await t.rejects(search.invoke({ collection: 'lc-tools' } as never), /schema|query/i, 'arguments are checked against the JSON Schema');

  const retrieve = createRetrieveChunksTool({ server: world.server, apiKey: API_KEY });
  const text: unknown = await retrieve.invoke({ document_urls: [world.url('harbour.pdf')], query: 'hydraulic hose' });
  t.match(String(text), /^\[1\] .*harbour\.pdf, pp?\. 2/, 'called with plain args, the tool returns the text');

  const lines: string[] = [];
  const docs = await main([world.server, '--collection', 'lc-tools', '--api-key', API_KEY, '--top-k', '1', 'caldera', 'otters', 'raft'], (l) => lines.push(l));
  t.equal(docs.length, 1);
  t.match(docs[0]!.metadata.source, /otters\.md$/);
  t.match(lines[0], /^\[1\] /);
  await t.rejects(main([world.server, 'question only']), /usage:/);
});
