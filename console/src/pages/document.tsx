// One document: its record and history (GET .../documents/{id}), and its chunks
// (GET .../documents/{id}/chunks, every page of them) shown three ways: the extracted content
// with page markers (the chunks in order, overlaps removed), its tables, and the chunk table with
// page range, heading path, importance and content type.
import { useState } from 'preact/hooks';
import { get, seg, type Chunk, type DocumentWithHistory, type Page } from '../api.ts';
import { ErrorBanner } from '../components/error-banner.tsx';
import { Table } from '../components/table.tsx';
import { href } from '../router.ts';
import { useAsync } from '../use-async.ts';
import { dash, fmtBytes, fmtDate, pages } from '../format.ts';

const MAX_CHUNKS = 5000;

async function allChunks(name: string, id: string, signal: AbortSignal): Promise<{ chunks: Chunk[]; total: number }> {
  const chunks: Chunk[] = [];
  let offset: number | null = 0;
  let total = 0;
  while (offset !== null && chunks.length < MAX_CHUNKS) {
    const page: Page<Chunk> = await get<Page<Chunk>>(`/v1/collections/${seg(name)}/documents/${seg(id)}/chunks`, { signal, query: { offset, limit: 200 } });
    chunks.push(...page.items);
    total = page.total;
    offset = page.next_offset;
  }
  return { chunks, total };
}

const PAGE_LINE = /^-{3} Page (\d+) -{3}$/m;
const PAGE_LINES = /^-{3} Page (\d+) -{3}$/gm;

type Segment = { kind: 'page'; page: number } | { kind: 'text' | 'table'; text: string; chunk: Chunk };

/**
 * The chunks' text in order as one flow, with the part a chunk repeats from the one before it cut
 * off, and page markers: the extractor's own "--- Page N ---" lines where the text has them, else
 * one wherever a chunk starts on a new page.
 */
function contentSegments(chunks: Chunk[]): Segment[] {
  const out: Segment[] = [];
  let end = -1;
  let lastPage: number | null = null;
  const marker = (page: number) => {
    if (page !== lastPage) out.push({ kind: 'page', page });
    lastPage = page;
  };
  for (const c of chunks) {
    let text = c.text;
    if (c.char_start < end && c.char_end - c.char_start === c.text.length) text = text.slice(Math.min(text.length, end - c.char_start));
    // What lay between two chunks (whitespace the chunker dropped) is not stored: a line break stands for it.
    else if (end >= 0 && c.char_start >= end) text = `\n${text}`;
    end = Math.max(end, c.char_end);
    if (c.page_start !== null && c.page_start !== lastPage && !PAGE_LINE.test(text.slice(0, 40))) marker(c.page_start);
    const kind = c.content_type === 'table' ? 'table' : 'text';
    let at = 0;
    for (const m of text.matchAll(PAGE_LINES)) {
      const before = text.slice(at, m.index).replace(at > 0 ? /^\n+/ : /^$/, '');
      if (before.trim()) out.push({ kind, text: before, chunk: c });
      marker(Number(m[1]));
      at = m.index + m[0].length;
    }
    const rest = at > 0 ? text.slice(at).replace(/^\n+/, '') : text;
    if (rest.trim()) out.push({ kind, text: rest, chunk: c });
  }
  return out;
}

type Tab = 'content' | 'tables' | 'chunks';

export function DocumentPage({ name, id }: { name: string; id: string }) {
  const doc = useAsync((signal) => get<DocumentWithHistory>(`/v1/collections/${seg(name)}/documents/${seg(id)}`, { signal }), [name, id]);
  const chunks = useAsync((signal) => allChunks(name, id, signal), [name, id]);
  const [tab, setTab] = useState<Tab>('content');
  const d = doc.data;
  const list = chunks.data?.chunks ?? [];
  const tables = list.filter((c) => c.content_type === 'table');
  const tabs: { id: Tab; label: string }[] = [
    { id: 'content', label: 'Content' },
    { id: 'tables', label: `Tables (${tables.length})` },
    { id: 'chunks', label: `Chunks (${chunks.data?.total ?? '…'})` },
  ];
  return (
    <section aria-labelledby="document-title" data-testid="document-page">
      <nav aria-label="Breadcrumb" class="crumbs">
        <a href="#/collections">Collections</a> <span aria-hidden="true">/</span> <a href={href.collection(name)}>{name}</a> <span aria-hidden="true">/</span>{' '}
        <span>{d ? d.title || d.filename || d.source : id}</span>
      </nav>
      <h1 id="document-title">{d ? d.title || d.filename || d.source : 'Document'}</h1>
      <ErrorBanner error={doc.error} />
      {d ? (
        <dl class="facts" data-testid="document-facts">
          <div><dt>Source</dt><dd class="ellipsis">{d.source}</dd></div>
          <div><dt>Status</dt><dd>{d.status}{d.error ? ` — ${d.error.code}: ${d.error.message}` : ''}</dd></div>
          <div><dt>Type</dt><dd>{dash(d.type)}</dd></div>
          <div><dt>Pages</dt><dd>{dash(d.pages)}</dd></div>
          <div><dt>Chunks</dt><dd>{d.chunk_count}</dd></div>
          <div><dt>Language</dt><dd>{dash(d.language)}</dd></div>
          <div><dt>Size</dt><dd>{fmtBytes(d.bytes)}</dd></div>
          <div><dt>Revision</dt><dd>{d.revision}</dd></div>
          <div><dt>Ingested</dt><dd>{fmtDate(d.ingested_at)}</dd></div>
        </dl>
      ) : null}
      {d?.history?.length ? (
        <details class="history">
          <summary>History ({d.history.length})</summary>
          <ul>
            {d.history.map((h, i) => (
              <li key={i}>
                {fmtDate(h.at)} — <strong>{h.action}</strong>
                {h.detail ? ` (${h.detail})` : ''}
                {h.job_id ? <span class="muted"> job {h.job_id}</span> : null}
              </li>
            ))}
          </ul>
        </details>
      ) : null}

      <div class="tabs" role="group" aria-label="Views of the document">
        {tabs.map((t) => (
          <button type="button" key={t.id} class={tab === t.id ? 'tab active' : 'tab'} aria-pressed={tab === t.id} data-testid={`tab-${t.id}`} onClick={() => setTab(t.id)}>
            {t.label}
          </button>
        ))}
      </div>
      <ErrorBanner error={chunks.error} />
      {chunks.loading && !chunks.data ? <p class="muted">Loading chunks…</p> : null}
      {chunks.data && chunks.data.total > list.length ? <p class="muted">Showing the first {list.length} of {chunks.data.total} chunks.</p> : null}

      {chunks.data && tab === 'content' ? (
        <article class="content" data-testid="document-content" aria-label="Extracted content">
          {list.length === 0 ? <p class="muted">No content.</p> : null}
          {contentSegments(list).map((b, i) =>
            b.kind === 'page' ? (
              <div key={`p${i}`} class="page-marker" data-testid="page-marker" role="separator" aria-label={`Page ${b.page}`}>
                Page {b.page}
              </div>
            ) : b.kind === 'table' ? (
              <pre key={i} class="table-text" title={`chunk ${b.chunk.ord}`}>{b.text.trim()}</pre>
            ) : (
              <span key={i} class="flow" title={`chunk ${b.chunk.ord}`}>{b.text}</span>
            ),
          )}
        </article>
      ) : null}

      {chunks.data && tab === 'tables' ? (
        <div data-testid="document-tables">
          {tables.length === 0 ? <p class="muted">No tables were found in this document.</p> : null}
          {tables.map((t, i) => (
            <figure class="table-figure" key={t.id}>
              <figcaption>
                Table {i + 1} · page {pages(t.page_start, t.page_end)}
                {t.heading_path.length ? ` · ${t.heading_path.join(' › ')}` : ''}
              </figcaption>
              <pre class="table-text">{t.text}</pre>
            </figure>
          ))}
        </div>
      ) : null}

      {chunks.data && tab === 'chunks' ? (
        <Table
          testId="chunks-table"
          rowTestId="chunk-row"
          caption="Chunks"
          rows={list}
          rowKey={(c) => c.id}
          columns={[
            { key: 'ord', label: '#', numeric: true, render: (c) => c.ord },
            { key: 'pages', label: 'Pages', render: (c) => pages(c.page_start, c.page_end) },
            { key: 'heading', label: 'Heading path', render: (c) => (c.heading_path.length ? c.heading_path.join(' › ') : <span class="muted">—</span>) },
            { key: 'importance', label: 'Importance', numeric: true, render: (c) => c.importance.toFixed(2) },
            { key: 'type', label: 'Content type', render: (c) => <span class="badge">{c.content_type}</span> },
            { key: 'chars', label: 'Chars', numeric: true, render: (c) => c.text.length },
            {
              key: 'text',
              label: 'Text',
              render: (c) => (
                <details>
                  <summary class="ellipsis chunk-preview">{c.text.slice(0, 140)}</summary>
                  <pre class="chunk-text">{c.text}</pre>
                </details>
              ),
            },
          ]}
        />
      ) : null}
    </section>
  );
}
