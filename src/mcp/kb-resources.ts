/**
 * The knowledge base as MCP resources: rag://collections (every collection with its statistics),
 * and the template rag://collections/{name} (one collection with its statistics and its first
 * documents). resources/list names each existing collection, so clients can browse them. A key
 * sees only its collections (others read as unknown resources, as if they did not exist), and only
 * with the search action.
 */
import { isToolError } from '../errors.ts';
import type { KnowledgeBaseApi } from '../kb/types.ts';
import { COLLECTION_NAME_PATTERN } from '../kb/types.ts';
import { hasAnyAction, maySeeCollection, type Principal } from '../auth/principal.ts';

export const COLLECTIONS_URI = 'rag://collections';
export const COLLECTION_URI_TEMPLATE = 'rag://collections/{name}';
/** Documents listed when a collection is read (list_documents pages through the rest). */
export const RESOURCE_DOCUMENTS = 50;
/** Collections named one by one in resources/list (the rest through rag://collections). */
const MAX_LISTED = 200;

const NAME = new RegExp(COLLECTION_NAME_PATTERN);

export interface ListedResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json';
}

export const collectionTemplate = {
  uriTemplate: COLLECTION_URI_TEMPLATE,
  name: 'collection',
  title: 'Knowledge-base collection',
  description: `One collection with its statistics and its first ${RESOURCE_DOCUMENTS} documents (list_documents pages through all of them).`,
  mimeType: 'application/json',
} as const;

export function kbResourceList(kb: KnowledgeBaseApi | undefined, principal: Principal): ListedResource[] {
  if (!kb || !hasAnyAction(principal, 'search')) return [];
  const head: ListedResource = {
    uri: COLLECTIONS_URI,
    name: 'collections',
    title: 'Knowledge-base collections',
    description: 'Every collection the API key may see, with its statistics (documents by status, chunks, bytes, pages, languages, types).',
    mimeType: 'application/json',
  };
  const collections = kb.listCollections().filter((c) => maySeeCollection(principal, c.name)).slice(0, MAX_LISTED);
  return [
    head,
    ...collections.map((c) => ({
      uri: `${COLLECTIONS_URI}/${c.name}`,
      name: `collection-${c.name}`,
      title: `Collection ${c.name}`,
      description: `${c.description ? `${c.description}. ` : ''}${c.stats.documents} documents, ${c.stats.chunks} chunks.`,
      mimeType: 'application/json' as const,
    })),
  ];
}

/** The resource's JSON, or undefined when the URI is not a knowledge-base one (null: no such collection). */
export function readKbResource(kb: KnowledgeBaseApi | undefined, uri: string, principal: Principal): unknown {
  if (!kb) return undefined;
  if (!hasAnyAction(principal, 'search')) return uri.startsWith(COLLECTIONS_URI) ? null : undefined;
  if (uri === COLLECTIONS_URI) return { collections: kb.listCollections().filter((c) => maySeeCollection(principal, c.name)) };
  const prefix = `${COLLECTIONS_URI}/`;
  if (!uri.startsWith(prefix)) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(uri.slice(prefix.length));
  } catch {
    return null;
  }
  if (!NAME.test(name) || !maySeeCollection(principal, name)) return null;
  try {
    const collection = kb.getCollection(name);
    const documents = kb.listDocuments(name, { offset: 0, limit: RESOURCE_DOCUMENTS });
    return { collection, documents };
  } catch (err) {
    if (isToolError(err) && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}
