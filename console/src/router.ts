// Hash routes (#/overview, #/collections, #/collections/:name, #/collections/:name/documents/:id,
// #/search, #/evaluate): the server serves one index.html, so the page picks what to show.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  page: 'overview' | 'collections' | 'collection' | 'document' | 'search' | 'evaluate' | 'not-found';
  params: Record<string, string>;
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/overview';
  const [pathPart, queryPart = ''] = raw.split('?');
  const query = new URLSearchParams(queryPart);
  const parts = pathPart.split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  const [a, b, c, d] = parts;
  if (parts.length === 1 && (a === 'overview' || a === 'collections' || a === 'search' || a === 'evaluate')) return { page: a, params: {}, query };
  if (a === 'collections' && parts.length === 2) return { page: 'collection', params: { name: b }, query };
  if (a === 'collections' && c === 'documents' && parts.length === 4) return { page: 'document', params: { name: b, id: d }, query };
  return { page: 'not-found', params: {}, query };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export const href = {
  collection: (name: string) => `#/collections/${encodeURIComponent(name)}`,
  document: (name: string, id: string) => `#/collections/${encodeURIComponent(name)}/documents/${encodeURIComponent(id)}`,
};
