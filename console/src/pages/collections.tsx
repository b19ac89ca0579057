// Collections: list (GET /v1/collections), create (POST /v1/collections) and delete
// (DELETE /v1/collections/{name}, confirmed inline).
import { useState } from 'preact/hooks';
import { del, get, post, seg, type Collection, type CollectionList } from '../api.ts';
import { ErrorBanner } from '../components/error-banner.tsx';
import { Table } from '../components/table.tsx';
import { href } from '../router.ts';
import { useAsync } from '../use-async.ts';
import { useWhoami } from '../whoami.ts';
import { dash, fmtBytes, fmtDate } from '../format.ts';

export function CollectionsPage() {
  const list = useAsync((signal) => get<CollectionList>('/v1/collections', { signal }), []);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const rows: Collection[] = list.data?.collections ?? [];
  // Creating and deleting collections needs the admin action.
  const { may } = useWhoami();

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await post('/v1/collections', { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) });
      setName('');
      setDescription('');
      list.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const remove = async (n: string) => {
    setError(null);
    try {
      await del(`/v1/collections/${seg(n)}`);
      setConfirming(null);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section aria-labelledby="collections-title" data-testid="collections-page">
      <div class="page-head">
        <h1 id="collections-title">Collections</h1>
      </div>
      {may('admin') ? <form class="inline-form" onSubmit={create} data-testid="create-collection-form">
        <div class="field">
          <label for="collection-name">Name</label>
          <input
            id="collection-name"
            required
            pattern="[a-z0-9][a-z0-9_\-]{0,63}"
            title="lowercase letters, digits, - and _, starting with a letter or digit"
            value={name}
            data-testid="collection-name-input"
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </div>
        <div class="field grow">
          <label for="collection-description">Description (optional)</label>
          <input id="collection-description" value={description} data-testid="collection-description-input" onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
        </div>
        <button type="submit" disabled={busy} data-testid="create-collection-button">
          Create collection
        </button>
      </form> : null}
      <ErrorBanner error={error ?? list.error} onDismiss={error ? () => setError(null) : undefined} />
      {list.loading && !list.data ? <p class="muted">Loading…</p> : null}
      {list.data ? <Table
        testId="collections-table"
        rowTestId="collection-row"
        caption="Collections"
        empty="No collections yet: create one above."
        rows={rows}
        rowKey={(c) => c.name}
        columns={[
          {
            key: 'name',
            label: 'Name',
            render: (c) => (
              <a href={href.collection(c.name)} data-testid="collection-link">
                {c.name}
              </a>
            ),
          },
          { key: 'description', label: 'Description', render: (c) => dash(c.description) },
          { key: 'documents', label: 'Documents', numeric: true, render: (c) => c.stats.documents },
          { key: 'chunks', label: 'Chunks', numeric: true, render: (c) => c.stats.chunks },
          { key: 'size', label: 'Size', numeric: true, render: (c) => fmtBytes(c.stats.bytes) },
          { key: 'embedder', label: 'Embedder', render: (c) => (c.embedder ? <code>{c.embedder}</code> : <span class="muted">lexical only</span>) },
          { key: 'updated', label: 'Updated', render: (c) => fmtDate(c.updated_at) },
          {
            key: 'actions',
            label: 'Actions',
            render: (c) =>
              !may('admin') ? (
                <span class="muted">—</span>
              ) : confirming === c.name ? (
                <span class="actions">
                  <button type="button" class="danger" data-testid="confirm-delete-collection" onClick={() => remove(c.name)}>
                    Delete {c.name} and its documents
                  </button>
                  <button type="button" class="secondary" onClick={() => setConfirming(null)}>
                    Cancel
                  </button>
                </span>
              ) : (
                <button type="button" class="secondary" data-testid="delete-collection" aria-label={`Delete collection ${c.name}`} onClick={() => setConfirming(c.name)}>
                  Delete
                </button>
              ),
          },
        ]}
      /> : null}
    </section>
  );
}
