// One collection: its documents (status, pages, chunks, language) with delete and re-ingest, and
// ingestion by upload (drag and drop or a file picker; one job per file) or by URL, each document
// with a live progress bar fed by its job's Server-Sent Events (GET /v1/jobs/{id}/events).
import { useEffect, useRef, useState } from 'preact/hooks';
import { del, events, get, post, seg, type Collection, type DocumentRecord, type Job, type JobEvent, type JobItem, type Page } from '../api.ts';
import { ErrorBanner } from '../components/error-banner.tsx';
import { ProgressBar } from '../components/progress-bar.tsx';
import { Table } from '../components/table.tsx';
import { href } from '../router.ts';
import { useAsync } from '../use-async.ts';
import { useWhoami } from '../whoami.ts';
import { dash, fmtBytes, fmtDate } from '../format.ts';
import { ENDED_JOB, itemEnded, itemFraction, itemStatus } from '../job-progress.ts';
import { SourcesPanel } from './collection-sources.tsx';

interface Tracked {
  key: string;
  label: string;
  jobId: string | null;
  status: string;
  items: JobItem[];
  error: unknown;
}

const PAGE = 100;
let trackerSeq = 0;

function StatusBadge({ status, error }: { status: string; error: DocumentRecord['error'] }) {
  const tone = status === 'ready' ? 'ok' : status === 'failed' ? 'fail' : 'warn';
  return (
    <span class={`badge ${tone}`} title={error ? `${error.code}: ${error.message}` : undefined}>
      {status}
    </span>
  );
}

export function CollectionPage({ name }: { name: string }) {
  const info = useAsync((signal) => get<Collection>(`/v1/collections/${seg(name)}`, { signal }), [name]);
  const [limit, setLimit] = useState(PAGE);
  const docs = useAsync((signal) => get<Page<DocumentRecord>>(`/v1/collections/${seg(name)}/documents`, { signal, query: { limit } }), [name, limit]);
  const [tracked, setTracked] = useState<Tracked[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [urls, setUrls] = useState('');
  const [dragging, setDragging] = useState(false);
  const [confirming, setConfirming] = useState<string | null>(null);
  // What the key may do: the upload area and the buttons follow it (GET /v1/whoami).
  const { may } = useWhoami();
  const aborts = useRef(new Set<AbortController>());
  const fileInput = useRef<HTMLInputElement>(null);
  const reuploadInput = useRef<HTMLInputElement>(null);
  const reuploadFor = useRef<DocumentRecord | null>(null);

  useEffect(() => () => { for (const c of aborts.current) c.abort(); }, []);

  const refresh = () => {
    docs.reload();
    info.reload();
  };

  const update = (key: string, fn: (t: Tracked) => Tracked) => setTracked((ts) => ts.map((t) => (t.key === key ? fn(t) : t)));

  /** Follows a job's events into its tracker until the job ends. */
  const follow = async (key: string, job: Job) => {
    update(key, (t) => ({ ...t, jobId: job.id, status: job.status, items: job.items }));
    if (ENDED_JOB.has(job.status)) {
      refresh();
      return;
    }
    const ctrl = new AbortController();
    aborts.current.add(ctrl);
    try {
      await events(
        job.id,
        (e) => {
          if (e.event === 'state') {
            const j = e.data as Job;
            update(key, (t) => ({ ...t, status: j.status, items: j.items }));
            return;
          }
          const ev = e.data as JobEvent;
          if (ev.item) {
            const item = ev.item;
            update(key, (t) => {
              const items = t.items.slice();
              items[item.index] = item;
              return { ...t, items, status: t.status === 'queued' ? 'running' : t.status };
            });
            if (e.event === 'item' && itemEnded(item)) refresh();
          }
          if (ev.job) {
            const status = ev.job.status;
            update(key, (t) => ({ ...t, status }));
          }
        },
        ctrl.signal,
      );
      // The stream ended: read the final job once, in case an event was missed.
      const final = await get<Job>(`/v1/jobs/${seg(job.id)}`);
      update(key, (t) => ({ ...t, status: final.status, items: final.items }));
      refresh();
    } catch (err) {
      update(key, (t) => ({ ...t, error: err }));
    } finally {
      aborts.current.delete(ctrl);
    }
  };

  const start = async (label: string, send: () => Promise<Job>) => {
    const key = `t${++trackerSeq}`;
    setTracked((ts) => [{ key, label, jobId: null, status: 'sending', items: [], error: null }, ...ts]);
    try {
      const job = await send();
      await follow(key, job);
    } catch (err) {
      update(key, (t) => ({ ...t, status: 'refused', error: err }));
    }
  };

  const uploadFiles = (files: FileList | File[] | null) => {
    if (!files) return;
    for (const f of Array.from(files)) {
      const form = new FormData();
      form.append('file', f, f.name);
      void start(f.name, () => post<Job>(`/v1/collections/${seg(name)}/documents`, form));
    }
  };

  const ingestUrls = (e: Event) => {
    e.preventDefault();
    const list = urls
      .split(/\s+/)
      .map((u) => u.trim())
      .filter(Boolean);
    if (list.length === 0) return;
    setUrls('');
    void start(list.length === 1 ? list[0] : `${list.length} URLs`, () => post<Job>(`/v1/collections/${seg(name)}/documents`, { urls: list }));
  };

  const reingest = (d: DocumentRecord) => {
    if (d.source_kind === 'upload') {
      // The server keeps no copy of an upload: replacing it means sending the file again under its name.
      reuploadFor.current = d;
      reuploadInput.current?.click();
      return;
    }
    void start(`re-ingest ${d.title ?? d.filename ?? d.source}`, () => post<Job>(`/v1/collections/${seg(name)}/documents/${seg(d.id)}/reingest`));
  };

  const reupload = (files: FileList | null) => {
    const d = reuploadFor.current;
    const f = files?.[0];
    if (!d || !f) return;
    const form = new FormData();
    form.append('file', f, d.filename ?? d.source);
    void start(`re-upload ${d.filename ?? d.source}`, () => post<Job>(`/v1/collections/${seg(name)}/documents`, form));
  };

  const remove = async (d: DocumentRecord) => {
    setError(null);
    try {
      await del(`/v1/collections/${seg(name)}/documents/${seg(d.id)}`);
      setConfirming(null);
      refresh();
    } catch (err) {
      setError(err);
    }
  };

  // Jobs already running when the page opened (another tab, a page reload) are followed too.
  useEffect(() => {
    let stop = false;
    void (async () => {
      for (const status of ['running', 'queued']) {
        try {
          const page = await get<Page<Job>>('/v1/jobs', { query: { collection: name, status, limit: 20 } });
          for (const job of page.items) {
            if (stop) return;
            const key = `t${++trackerSeq}`;
            setTracked((ts) => (ts.some((t) => t.jobId === job.id) ? ts : [{ key, label: `job ${job.id}`, jobId: job.id, status: job.status, items: job.items, error: null }, ...ts]));
            void follow(key, job);
          }
        } catch {
          // the documents list shows any error that matters
        }
      }
    })();
    return () => {
      stop = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [name]);

  const c = info.data;
  const rows = docs.data?.items ?? [];
  return (
    <section aria-labelledby="collection-title" data-testid="collection-page">
      <nav aria-label="Breadcrumb" class="crumbs">
        <a href="#/collections">Collections</a> <span aria-hidden="true">/</span> <span>{name}</span>
      </nav>
      <div class="page-head">
        <h1 id="collection-title">{name}</h1>
        <a class="button secondary" href={`#/search?collection=${encodeURIComponent(name)}`}>
          Search this collection
        </a>
      </div>
      <ErrorBanner error={info.error} />
      {c ? (
        <p class="muted" data-testid="collection-stats">
          {c.description ? `${c.description} · ` : ''}
          {c.stats.documents} documents · {c.stats.chunks} chunks · {c.stats.pages} pages · {fmtBytes(c.stats.bytes)} · {c.embedder ? `dense index: ${c.embedder}` : 'lexical only'}
        </p>
      ) : null}

      {may('ingest') ? <div class="ingest">
        <div
          class={`drop-zone ${dragging ? 'dragging' : ''}`}
          data-testid="drop-zone"
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            uploadFiles(e.dataTransfer?.files ?? null);
          }}
        >
          <p>
            <strong>Drop files here</strong> to ingest them, or
          </p>
          <label for="file-input" class="button">
            Choose files…
          </label>
          <input
            id="file-input"
            class="visually-hidden-input"
            type="file"
            multiple
            data-testid="file-input"
            onChange={(e) => {
              const input = e.target as HTMLInputElement;
              uploadFiles(input.files);
              input.value = '';
            }}
            ref={fileInput}
          />
          <p class="muted small">PDF, Word, PowerPoint, Excel, CSV, HTML, Markdown, text, images (OCR)</p>
        </div>
        <input
          id="reupload-input"
          class="visually-hidden-input"
          type="file"
          tabIndex={-1}
          aria-label="File to replace the uploaded document with"
          data-testid="reupload-input"
          ref={reuploadInput}
          onChange={(e) => {
            const input = e.target as HTMLInputElement;
            reupload(input.files);
            input.value = '';
          }}
        />
        <form class="url-form" onSubmit={ingestUrls} data-testid="url-form">
          <label for="ingest-urls">URLs to ingest, one per line</label>
          <textarea id="ingest-urls" rows={3} value={urls} data-testid="url-input" placeholder="https://example.com/report.pdf" onInput={(e) => setUrls((e.target as HTMLTextAreaElement).value)} />
          <button type="submit" data-testid="ingest-urls-button">
            Ingest URLs
          </button>
        </form>
      </div> : null}

      {tracked.length > 0 ? (
        <div class="jobs" data-testid="ingest-jobs">
          <h2>Ingestion</h2>
          {tracked.map((t) => (
            <div class="job" key={t.key} data-testid="ingest-job" data-job-id={t.jobId ?? ''} data-status={t.status}>
              <div class="job-head">
                <span>{t.label}</span>
                <span class="muted" role="status" data-testid="ingest-job-status">{t.jobId ? `job ${t.jobId} · ` : ''}{t.status}</span>
              </div>
              {t.items.length === 0 && !t.error ? <ProgressBar value={0} label={t.label} status={t.status} testId="ingest-progress" /> : null}
              {t.items.map((item) => (
                <div key={item.index} data-testid="ingest-item" data-source={item.source} data-stage={item.stage}>
                  <ProgressBar
                    value={itemFraction(item)}
                    label={item.source}
                    status={itemStatus(item)}
                    tone={item.stage === 'failed' || item.stage === 'cancelled' ? 'fail' : item.stage === 'done' || item.stage === 'skipped' ? 'ok' : undefined}
                    testId="ingest-progress"
                  />
                  {item.error ? (
                    <p class="item-error" data-testid="ingest-item-error">
                      <strong>{item.error.code}</strong> {item.error.message}
                    </p>
                  ) : null}
                  {item.document_id && (item.stage === 'done' || item.stage === 'skipped') ? (
                    <a href={href.document(name, item.document_id)} class="small">
                      open document
                    </a>
                  ) : null}
                </div>
              ))}
              <ErrorBanner error={t.error} />
            </div>
          ))}
        </div>
      ) : null}

      <SourcesPanel name={name} />

      <div class="page-head">
        <h2>Documents{docs.data ? ` (${docs.data.total})` : ''}</h2>
        <button type="button" class="secondary" onClick={refresh} data-testid="refresh-documents">
          Refresh
        </button>
      </div>
      <ErrorBanner error={error ?? docs.error} onDismiss={error ? () => setError(null) : undefined} />
      {docs.data ? <Table
        testId="documents-table"
        rowTestId="document-row"
        caption={`Documents of ${name}`}
        empty="No documents yet: drop files above or ingest URLs."
        rows={rows}
        rowKey={(d) => d.id}
        columns={[
          {
            key: 'doc',
            label: 'Document',
            render: (d) => (
              <div>
                <a href={href.document(name, d.id)} data-testid="document-link">
                  {d.title || d.filename || d.source}
                </a>
                {d.title && d.title !== d.source ? <div class="muted small ellipsis">{d.source}</div> : null}
              </div>
            ),
          },
          { key: 'status', label: 'Status', render: (d) => <StatusBadge status={d.status} error={d.error} /> },
          { key: 'type', label: 'Type', render: (d) => dash(d.type) },
          { key: 'pages', label: 'Pages', numeric: true, render: (d) => dash(d.pages) },
          { key: 'chunks', label: 'Chunks', numeric: true, render: (d) => d.chunk_count },
          { key: 'language', label: 'Language', render: (d) => dash(d.language) },
          { key: 'size', label: 'Size', numeric: true, render: (d) => fmtBytes(d.bytes) },
          { key: 'ingested', label: 'Ingested', render: (d) => fmtDate(d.ingested_at) },
          {
            key: 'actions',
            label: 'Actions',
            render: (d) =>
              confirming === d.id ? (
                <span class="actions">
                  <button type="button" class="danger" data-testid="confirm-delete-document" onClick={() => remove(d)}>
                    Confirm delete
                  </button>
                  <button type="button" class="secondary" onClick={() => setConfirming(null)}>
                    Cancel
                  </button>
                </span>
              ) : (
                <span class="actions">
                  {may('ingest') ? <button type="button" class="secondary" data-testid="reingest-document" aria-label={`${d.source_kind === 'upload' ? 'Upload again' : 'Re-ingest'} ${d.title ?? d.source}`} title={d.source_kind === 'upload' ? 'Choose the file again to replace this upload' : 'Ingest the source again'} onClick={() => reingest(d)}>
                    {d.source_kind === 'upload' ? 'Upload again…' : 'Re-ingest'}
                  </button> : null}
                  {may('delete') ? <button type="button" class="secondary" data-testid="delete-document" aria-label={`Delete ${d.title ?? d.source}`} onClick={() => setConfirming(d.id)}>
                    Delete
                  </button> : null}
                </span>
              ),
          },
        ]}
      /> : null}
      {docs.data?.next_offset !== null && docs.data?.next_offset !== undefined ? (
        <button type="button" class="secondary" onClick={() => setLimit((l) => Math.min(500, l + PAGE))} disabled={limit >= 500}>
          Show more
        </button>
      ) : null}
    </section>
  );
}
