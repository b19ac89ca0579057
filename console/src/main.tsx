// The console shell: header with the API key box (kept in sessionStorage), navigation, and the
// hash router that picks the page. Pages remount when the key changes so they reload with it.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { getApiKey, onApiKeyChange, setApiKey } from './api.ts';
import { useRoute, type Route } from './router.ts';
import { OverviewPage } from './pages/overview.tsx';
import { CollectionsPage } from './pages/collections.tsx';
import { CollectionPage } from './pages/collection.tsx';
import { DocumentPage } from './pages/document.tsx';
import { ErrorBanner } from './components/error-banner.tsx';
import './styles.css';

// Search and Evaluate (charts, the metrics) load on first visit, so the first page stays small.
type PageComponent = () => preact.JSX.Element | null;
const lazyPages: Record<'search' | 'evaluate', () => Promise<PageComponent>> = {
  search: () => import('./pages/search.tsx').then((m) => m.SearchPage),
  evaluate: () => import('./pages/evaluate.tsx').then((m) => m.EvaluatePage),
};
const loadedPages: Partial<Record<keyof typeof lazyPages, PageComponent>> = {};

function LazyPage({ name }: { name: keyof typeof lazyPages }) {
  const [Page, setPage] = useState<PageComponent | null>(() => loadedPages[name] ?? null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (Page) return;
    let live = true;
    lazyPages[name]().then(
      (p) => {
        loadedPages[name] = p;
        if (live) setPage(() => p);
      },
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [name]);
  if (error) return <ErrorBanner error={error} />;
  return Page ? <Page /> : <p class="muted">Loading…</p>;
}

const NAV: { id: string; label: string; match: Route['page'][] }[] = [
  { id: 'overview', label: 'Overview', match: ['overview'] },
  { id: 'collections', label: 'Collections', match: ['collections', 'collection', 'document'] },
  { id: 'search', label: 'Search', match: ['search'] },
  { id: 'evaluate', label: 'Evaluate', match: ['evaluate'] },
];

function ApiKeyBox() {
  const [saved, setSaved] = useState(getApiKey());
  const [draft, setDraft] = useState(saved);
  useEffect(() => onApiKeyChange(() => setSaved(getApiKey())), []);
  return (
    <form
      class="key-box"
      data-testid="api-key-form"
      onSubmit={(e) => {
        e.preventDefault();
        setApiKey(draft.trim());
      }}
    >
      <label for="api-key">API key</label>
      <input
        id="api-key"
        type="password"
        autocomplete="off"
        spellcheck={false}
        placeholder="only when API_KEYS is set"
        value={draft}
        data-testid="api-key-input"
        onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
      />
      <button type="submit" data-testid="api-key-save">
        Use key
      </button>
      {saved ? (
        <button
          type="button"
          class="secondary"
          data-testid="api-key-clear"
          onClick={() => {
            setDraft('');
            setApiKey('');
          }}
        >
          Forget
        </button>
      ) : null}
      <span class="muted key-state" data-testid="api-key-state" aria-live="polite">
        {saved ? 'key set for this tab' : 'no key'}
      </span>
    </form>
  );
}

function PageFor({ route }: { route: Route }) {
  switch (route.page) {
    case 'overview':
      return <OverviewPage />;
    case 'collections':
      return <CollectionsPage />;
    case 'collection':
      return <CollectionPage name={route.params.name} />;
    case 'document':
      return <DocumentPage name={route.params.name} id={route.params.id} />;
    case 'search':
      return <LazyPage key="search" name="search" />;
    case 'evaluate':
      return <LazyPage key="evaluate" name="evaluate" />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            No page at this address. <a href="#/overview">Go to the overview</a>.
          </p>
        </section>
      );
  }
}

function App() {
  const route = useRoute();
  const [keyVersion, setKeyVersion] = useState(0);
  useEffect(() => onApiKeyChange(() => setKeyVersion((v) => v + 1)), []);
  const firstRoute = useRef(true);
  useEffect(() => {
    const title = NAV.find((n) => n.match.includes(route.page))?.label ?? 'Not found';
    document.title = `${title} · RAG console`;
    // After a navigation (not on the first load) keyboard and screen-reader users land on the new page.
    if (firstRoute.current) firstRoute.current = false;
    else document.getElementById('main')?.focus({ preventScroll: true });
  }, [route.page, route.params.name, route.params.id]);
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <span aria-hidden="true" class="logo">◆</span> RAG console
        </div>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.id}>
                <a href={`#/${n.id}`} data-testid={`nav-${n.id}`} aria-current={n.match.includes(route.page) ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <ApiKeyBox />
      </header>
      <main id="main" tabIndex={-1}>
        <PageFor key={`${keyVersion}`} route={route} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
