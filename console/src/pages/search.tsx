// Search: a query over a collection (POST /v1/collections/{name}/search) or a document URL
// (POST /v1/documents/retrieve), with switches for mode, rerank and top_k; results name their
// document, pages and heading; the explain trace is drawn as a stage waterfall and a rank-change
// table (lexical, dense and fused ranks, reranker moves, moved up / down / new / dropped).
// Rerank is pre-checked only when the server has a reranker; without one it is disabled with the reason.
import { useEffect, useState } from 'preact/hooks';
import { get, seg, type Collection, type CollectionList, type DocumentWithHistory } from '../api.ts';
import { ErrorBanner } from '../components/error-banner.tsx';
import { Waterfall, fmtMs } from '../components/charts.tsx';
import { href } from '../router.ts';
import { pages } from '../format.ts';
import { retrieveUrl, searchCollection, type CollectionHit, type Mode, type RetrieveHit, type Retrieval } from '../search/search-api.ts';
import { rankRows, waterfall, type Movement, type SearchTrace, type TraceCandidate } from '../search/trace-model.ts';
import { rerankAvailability, shortReason } from '../search/capabilities.ts';
import { useCapabilities } from '../use-capabilities.ts';
import './quality.css';

type Target = 'collection' | 'url';

interface Answer {
  target: Target;
  collection: string | null;
  hits: Array<(CollectionHit | RetrieveHit) & { chunk_id?: number; document_id?: string; title?: string | null }>;
  retrieval: Retrieval;
  timings: Record<string, number>;
  trace: SearchTrace | null;
  confidence: string | null;
  message: string | null;
  client_ms: number;
}

function initialParams(): URLSearchParams {
  const q = location.hash.split('?')[1] ?? '';
  return new URLSearchParams(q);
}

export function SearchPage() {
  const params = initialParams();
  const [collections, setCollections] = useState<Collection[]>([]);
  const [listError, setListError] = useState<unknown>(null);
  const [target, setTarget] = useState<Target>(params.get('url') ? 'url' : 'collection');
  const [collection, setCollection] = useState(params.get('collection') ?? '');
  const [url, setUrl] = useState(params.get('url') ?? '');
  const [query, setQuery] = useState(params.get('q') ?? '');
  const [mode, setMode] = useState<'' | Mode>('');
  // null: follow the server (checked when it has a reranker, once its health has answered).
  const [rerankChoice, setRerankChoice] = useState<boolean | null>(null);
  const health = useCapabilities();
  const reranker = health ? rerankAvailability(health) : null;
  const rerank = reranker?.available === false ? false : (rerankChoice ?? reranker?.available ?? false);
  const [topK, setTopK] = useState(5);
  const [explain, setExplain] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [answer, setAnswer] = useState<Answer | null>(null);

  useEffect(() => {
    const c = new AbortController();
    get<CollectionList>('/v1/collections', { signal: c.signal }).then(
      (r) => {
        setCollections(r.collections);
        setCollection((cur) => cur || r.collections[0]?.name || '');
      },
      (e) => {
        if (!c.signal.aborted) setListError(e);
      },
    );
    return () => c.abort();
  }, []);

  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const opts = { query: query.trim(), top_k: topK, rerank, explain, ...(mode ? { mode } : {}) };
    const t0 = performance.now();
    try {
      if (target === 'collection') {
        const r = await searchCollection(collection, opts);
        setAnswer({ target, collection, hits: r.results, retrieval: r.retrieval, timings: r.timings_ms, trace: r.trace ?? null, confidence: r.confidence, message: r.message, client_ms: performance.now() - t0 });
      } else {
        const r = await retrieveUrl(url.trim(), opts);
        const { timings, ...retrieval } = r.retrieval;
        setAnswer({ target, collection: null, hits: r.results, retrieval, timings, trace: r.trace ?? null, confidence: null, message: null, client_ms: performance.now() - t0 });
      }
    } catch (err) {
      setError(err);
      setAnswer(null);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="search-title" data-testid="search-page">
      <div class="page-head">
        <h1 id="search-title">Search</h1>
      </div>
      <ErrorBanner error={listError} />
      <form class="search-form" onSubmit={run} data-testid="search-form">
        <fieldset class="plain">
          <legend>Search in</legend>
          <label class="check">
            <input type="radio" name="target" value="collection" checked={target === 'collection'} onChange={() => setTarget('collection')} data-testid="target-collection" />
            a collection
          </label>
          <label class="check">
            <input type="radio" name="target" value="url" checked={target === 'url'} onChange={() => setTarget('url')} data-testid="target-url" />
            a document URL
          </label>
        </fieldset>
        <div class="row">
          {target === 'collection' ? (
            <div class="field">
              <label for="search-collection">Collection</label>
              <select id="search-collection" value={collection} required onChange={(e) => setCollection((e.target as HTMLSelectElement).value)} data-testid="search-collection">
                {collections.length === 0 ? <option value="">no collections yet</option> : null}
                {collections.map((c) => (
                  <option key={c.name} value={c.name}>
                    {c.name} ({c.stats.documents} docs)
                  </option>
                ))}
              </select>
            </div>
          ) : (
            <div class="field grow">
              <label for="search-url">Document URL</label>
              <input id="search-url" type="url" required placeholder="https://example.org/report.pdf" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} data-testid="search-url" />
            </div>
          )}
          <div class="field grow">
            <label for="search-query">Query</label>
            <input id="search-query" type="search" required maxLength={2000} value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} data-testid="search-query" />
          </div>
        </div>
        <div class="row">
          <div class="field">
            <label for="search-mode">Mode</label>
            <select id="search-mode" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as '' | Mode)} data-testid="search-mode">
              <option value="">server default</option>
              <option value="lexical">lexical (BM25)</option>
              <option value="dense">dense (embeddings)</option>
              <option value="hybrid">hybrid (fused)</option>
            </select>
          </div>
          <div class="field">
            <label for="search-topk">top_k</label>
            <input id="search-topk" type="number" min={1} max={20} value={topK} onInput={(e) => setTopK(Math.max(1, Math.min(20, Number((e.target as HTMLInputElement).value) || 5)))} data-testid="search-topk" />
          </div>
          <label class="check" title={reranker?.reason ?? undefined}>
            <input
              type="checkbox"
              checked={rerank}
              disabled={reranker?.available === false}
              aria-describedby={reranker?.reason ? 'search-rerank-reason' : undefined}
              onChange={(e) => setRerankChoice((e.target as HTMLInputElement).checked)}
              data-testid="search-rerank"
            />
            rerank
          </label>
          {reranker?.reason ? (
            <span id="search-rerank-reason" class="muted small" title={reranker.reason} data-testid="search-rerank-reason">
              unavailable: {shortReason(reranker.reason, 80)}
            </span>
          ) : null}
          <label class="check">
            <input type="checkbox" checked={explain} onChange={(e) => setExplain((e.target as HTMLInputElement).checked)} data-testid="search-explain" />
            explain (trace)
          </label>
          <button type="submit" disabled={busy || (target === 'collection' && !collection)} data-testid="search-submit">
            {busy ? 'Searching…' : 'Search'}
          </button>
        </div>
      </form>
      <ErrorBanner error={error} />
      {answer ? <AnswerView answer={answer} /> : null}
    </section>
  );
}

function AnswerView({ answer }: { answer: Answer }) {
  const r = answer.retrieval;
  const [showTrace, setShowTrace] = useState(false);
  return (
    <div data-testid="search-answer">
      <div class="retrieval-line" aria-live="polite">
        <span>
          mode <strong data-testid="answer-mode">{r.mode}</strong>
        </span>
        <span>embedder {r.embedder ?? '—'}</span>
        <span>
          reranker <span class={`badge ${r.reranker === 'used' ? 'ok' : r.reranker === 'failed' ? 'fail' : 'warn'}`}>{r.reranker}</span>
          {r.reranker_reason ? <span class="muted small"> {r.reranker_reason}</span> : null}
        </span>
        {answer.confidence ? (
          <span>
            confidence <span class="badge" data-testid="answer-confidence">{answer.confidence}</span>
          </span>
        ) : null}
        <span class="muted">
          server {fmtMs(answer.timings.total_ms ?? 0)} · page {fmtMs(answer.client_ms)}
        </span>
      </div>
      {r.reason ? <p class="muted small">{r.reason}</p> : null}
      {answer.message ? <p data-testid="answer-message">{answer.message}</p> : null}
      <h2>Results ({answer.hits.length})</h2>
      {answer.hits.length === 0 ? <p class="muted">No results.</p> : null}
      <ol class="hits" data-testid="search-results">
        {answer.hits.map((h, i) => (
          <li class="hit" key={`${h.source}#${h.chunk_index}`} data-testid="search-hit">
            <div class="hit-head">
              <span class="hit-rank">#{i + 1}</span>
              <span>
                {answer.collection && h.document_id ? (
                  <a href={href.document(answer.collection, h.document_id)}>{h.title || h.source}</a>
                ) : (
                  <span>{h.title || h.source}</span>
                )}
              </span>
              <span class="muted">page {pages(h.page_start, h.page_end)}</span>
              <span class="muted">{h.heading_path.length ? h.heading_path.join(' › ') : 'no heading'}</span>
              <span class="badge">{h.content_type}</span>
              <span class="muted small">chunk {h.chunk_index} · score {h.score.toFixed(4)}</span>
            </div>
            <p class="hit-text">{h.text}</p>
          </li>
        ))}
      </ol>
      <h2>Trace</h2>
      <div class="actions">
        <button type="button" class="secondary" aria-expanded={showTrace} aria-controls="trace-panel" onClick={() => setShowTrace(!showTrace)} data-testid="trace-toggle">
          {showTrace ? 'Hide trace' : 'Show trace'}
        </button>
      </div>
      {showTrace ? (
        <div id="trace-panel" data-testid="trace-panel">
          <TraceView answer={answer} />
        </div>
      ) : null}
    </div>
  );
}

const MOVE_TEXT: Record<Movement, string> = { up: 'moved up', down: 'moved down', unchanged: 'unchanged', new: 'new', dropped: 'dropped', outside: '—' };

/** Names of the documents the trace mentions that no hit names (dropped candidates), read from the collection. */
function useDocumentNames(answer: Answer): Map<string, string> {
  const [names, setNames] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    const name = answer.collection;
    if (!name || !answer.trace) return;
    const known = new Set(answer.hits.map((h) => h.document_id));
    const missing = [...new Set(answer.trace.candidates.map((c) => c.document_id).filter((id): id is string => !!id && !known.has(id)))].slice(0, 60);
    if (missing.length === 0) return;
    const c = new AbortController();
    void Promise.all(
      missing.map((id) =>
        get<DocumentWithHistory>(`/v1/collections/${seg(name)}/documents/${seg(id)}`, { signal: c.signal }).then(
          (d) => [id, d.title || d.filename || d.source] as const,
          () => [id, id] as const,
        ),
      ),
    ).then((pairs) => {
      if (!c.signal.aborted) setNames(new Map(pairs));
    });
    return () => c.abort();
  }, [answer]);
  return names;
}

function TraceView({ answer }: { answer: Answer }) {
  const [all, setAll] = useState(false);
  const names = useDocumentNames(answer);
  const wf = waterfall(answer.timings);
  const trace = answer.trace;
  const topK = answer.retrieval.top_k;
  return (
    <>
      <h3>Time per stage</h3>
      <Waterfall bars={wf.bars} total={wf.total_ms} other={wf.other_ms} />
      {!trace ? (
        <p class="muted">No rank trace: search again with “explain” on.</p>
      ) : (
        <>
          <h3>Rank changes</h3>
          <p class="muted small">
            Stages {trace.stages.join(' → ')} · {trace.candidates_per_stage} candidates per first stage
            {trace.rrf_k !== null ? ` · RRF k=${trace.rrf_k}` : ''}
            {trace.diversity_threshold !== null ? ` · near-duplicates over ${trace.diversity_threshold} dropped` : ''}. Compared with the fused top {topK}:
          </p>
          <div class="trace-summary" data-testid="trace-summary">
            <span class="badge">moved up {trace.summary.moved_up}</span>
            <span class="badge">moved down {trace.summary.moved_down}</span>
            <span class="badge">unchanged {trace.summary.unchanged}</span>
            <span class="badge">new {trace.summary.new}</span>
            <span class="badge">dropped {trace.summary.dropped}</span>
          </div>
          <label class="check" data-testid="trace-all-label">
            <input type="checkbox" checked={all} onChange={(e) => setAll((e.target as HTMLInputElement).checked)} data-testid="trace-all" />
            show every candidate ({trace.candidates.length})
          </label>
          <div class="table-wrap">
            <table data-testid="rank-table">
              <caption class="sr-only">Rank of each candidate at each stage</caption>
              <thead>
                <tr>
                  <th scope="col">Chunk</th>
                  <th scope="col" class="num">Lexical</th>
                  <th scope="col" class="num">Dense</th>
                  <th scope="col" class="num">Fused</th>
                  <th scope="col" class="num">Reranked</th>
                  <th scope="col" class="num">Rerank move</th>
                  <th scope="col" class="num">Final</th>
                  <th scope="col">Change</th>
                </tr>
              </thead>
              <tbody>
                {rankRows(trace, topK, all).map((c) => (
                  <tr key={`${c.chunk_id ?? c.source}:${c.chunk_index}`} data-testid="rank-row" data-movement={c.movement}>
                    <td>{chunkLabel(c, answer, names)}</td>
                    <td class="num">{rankCell(c.lexical_rank, c.lexical_score)}</td>
                    <td class="num">{rankCell(c.dense_rank, c.dense_score)}</td>
                    <td class="num">{rankCell(c.fused_rank, c.fused_score)}</td>
                    <td class="num">{rankCell(c.rerank_rank, c.rerank_score)}</td>
                    <td class="num">{c.rerank_delta === null ? '—' : c.rerank_delta > 0 ? `▲ ${c.rerank_delta}` : c.rerank_delta < 0 ? `▼ ${-c.rerank_delta}` : '0'}</td>
                    <td class="num">{c.final_rank ?? '—'}</td>
                    <td class={`move-${c.movement}`}>
                      {MOVE_TEXT[c.movement]}
                      {c.dropped_reason ? <span class="muted small"> ({c.dropped_reason === 'duplicate' ? 'near-duplicate' : 'reranked out'})</span> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </>
  );
}

function rankCell(rank: number | null, score: number | null) {
  if (rank === null) return '—';
  return (
    <span title={score === null ? undefined : `score ${score}`}>
      {rank}
      {score !== null ? <span class="muted small"> ({score.toFixed(3)})</span> : null}
    </span>
  );
}

function chunkLabel(c: TraceCandidate, answer: Answer, names: Map<string, string>) {
  const hit = answer.hits.find((h) => (c.chunk_id !== undefined ? h.chunk_id === c.chunk_id : h.source === c.source && h.chunk_index === c.chunk_index));
  const sameDoc = c.document_id ? answer.hits.find((h) => h.document_id === c.document_id) : undefined;
  const name = hit ? hit.title || hit.source : sameDoc ? sameDoc.title || sameDoc.source : c.source ?? (c.document_id ? names.get(c.document_id) ?? c.document_id : '');
  return (
    <span>
      {name ? <span class="ellipsis">{name}</span> : null} <span class="muted small">#{c.chunk_index}</span>
    </span>
  );
}
