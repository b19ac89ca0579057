// The Sources panel of a collection page: the folders, sites and URL lists the collection is kept
// in step with (GET /v1/collections/{name}/sources), each with its last sync's status and counts,
// a Sync button (POST .../sources/{id}/sync) and Remove; and a small form to add one.
import { useEffect, useState } from 'preact/hooks';
import { api, del, get, post, seg, type Source, type SourceList } from '../api.ts';
import { ErrorBanner } from '../components/error-banner.tsx';
import { Table } from '../components/table.tsx';
import { useAsync } from '../use-async.ts';
import { dash, fmtDate } from '../format.ts';

/** How often the panel re-reads the list while a sync runs. */
const RUNNING_POLL_MS = 2000;

function target(s: Source): string {
  if (s.kind === 'folder') return s.settings.path ?? '';
  if (s.kind === 'site') return s.settings.start_url ?? '';
  return `${s.settings.urls?.length ?? 0} URLs`;
}

function countsText(s: Source): string {
  const c = s.counts;
  if (!c) return '—';
  return `${c.new} new, ${c.changed} changed, ${c.unchanged} unchanged, ${c.gone} gone, ${c.failed} failed${c.transient ? ` (${c.transient} transient)` : ''}`;
}

export function SourcesPanel({ name }: { name: string }) {
  const list = useAsync((signal) => get<SourceList>(`/v1/collections/${seg(name)}/sources`, { signal }), [name]);
  const [error, setError] = useState<unknown>(null);
  const [kind, setKind] = useState<Source['kind']>('folder');
  const [value, setValue] = useState('');
  const [every, setEvery] = useState('');
  const running = list.data?.items.some((s) => s.running) ?? false;

  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(() => list.reload(), RUNNING_POLL_MS);
    return () => clearTimeout(timer);
  }, [running, list.data]);

  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError(e);
    }
    list.reload();
  };

  const add = (e: Event) => {
    e.preventDefault();
    const v = value.trim();
    if (!v) return;
    const fields = kind === 'folder' ? { path: v } : kind === 'site' ? { start_url: v } : { urls: v.split(/[\s,]+/).filter(Boolean) };
    const sync_every = every.trim() ? Number(every) : undefined;
    void act(async () => {
      await post<Source>(`/v1/collections/${seg(name)}/sources`, { kind, ...fields, ...(sync_every ? { sync_every } : {}) });
      setValue('');
    });
  };

  return (
    <div data-testid="sources-panel">
      <div class="page-head">
        <h2>Sources{list.data ? ` (${list.data.total})` : ''}</h2>
      </div>
      <form class="row" onSubmit={add} data-testid="add-source">
        <label>
          Kind{' '}
          <select value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as Source['kind'])}>
            <option value="folder">folder</option>
            <option value="urls">URL list</option>
            <option value="site">site</option>
          </select>
        </label>
        <input
          type="text"
          aria-label={kind === 'folder' ? 'Folder path' : kind === 'site' ? 'Start URL' : 'URLs'}
          placeholder={kind === 'folder' ? '/absolute/folder inside ALLOWED_DIRS' : kind === 'site' ? 'https://docs.example.com/' : 'https://… https://…'}
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        />
        <input type="number" min={10} aria-label="Sync every (seconds)" placeholder="sync every (s)" value={every} onInput={(e) => setEvery((e.target as HTMLInputElement).value)} />
        <button type="submit">Add source</button>
      </form>
      <ErrorBanner error={error ?? list.error} />
      {list.data ? (
        <Table
          testId="sources-table"
          rowTestId="source-row"
          caption={`Sources of ${name}`}
          empty="No sources: add a folder, a site or a list of URLs to keep this collection in step with it."
          rows={list.data.items}
          rowKey={(s) => s.id}
          columns={[
            { key: 'kind', label: 'Kind', render: (s) => s.kind },
            { key: 'target', label: 'Source', render: (s) => <span title={s.id}>{target(s)}</span> },
            { key: 'schedule', label: 'Schedule', render: (s) => (s.sync_every ? `every ${s.sync_every} s` : s.watch ? 'on change' : 'on demand') },
            { key: 'status', label: 'Last sync', render: (s) => (s.running ? 'running…' : <span title={s.last_error ?? s.notes.join('\n')}>{dash(s.last_status)}</span>) },
            { key: 'when', label: 'At', render: (s) => (s.last_sync_at ? fmtDate(s.last_sync_at) : '—') },
            { key: 'counts', label: 'Counts', render: (s) => countsText(s) },
            {
              key: 'actions',
              label: 'Actions',
              render: (s) => (
                <span class="row">
                  <button type="button" class="secondary" disabled={s.running} onClick={() => act(() => post(`/v1/collections/${seg(name)}/sources/${seg(s.id)}/sync`))}>
                    Sync
                  </button>
                  <button type="button" class="secondary" onClick={() => act(() => del(`/v1/collections/${seg(name)}/sources/${seg(s.id)}`))}>
                    Remove
                  </button>
                </span>
              ),
            },
          ]}
        />
      ) : null}
    </div>
  );
}

// PATCH travels through the generic call; kept here so a settings editor can use it.
export const patchSource = (name: string, id: string, change: Record<string, unknown>) => api<Source>('PATCH', `/v1/collections/${seg(name)}/sources/${seg(id)}`, change);
