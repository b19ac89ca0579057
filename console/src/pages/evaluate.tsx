// Evaluate: load a BEIR set (corpus.jsonl, queries.jsonl, qrels.tsv) or a list of
// {question, expected} pairs, point it at a collection (an existing one, or a new one the corpus
// is uploaded into), run lexical / dense / hybrid / hybrid + rerank through the public search API
// and compare nDCG@10, Recall@100, MRR@10, Hit@K and latency per variant in a table and a chart.
// Only the variants the collection can serve are selectable (no embedder: lexical only); the others
// are shown disabled with the server's reason (search/capabilities.ts).
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, type Collection, type CollectionList } from '../api.ts';
import { ErrorBanner } from '../components/error-banner.tsx';
import { ProgressBar } from '../components/progress-bar.tsx';
import { GroupedBars, fmtMs } from '../components/charts.tsx';
import { beirSet, listSet, SetError, type EvalSet } from '../eval/parse-set.ts';
import { API_TOP_K, ingestCorpus, runVariant, VARIANTS, type IngestReport, type VariantResult } from '../eval/run-variants.ts';
import { shortReason, variantAvailability, type Availability } from '../search/capabilities.ts';
import { useCapabilities } from '../use-capabilities.ts';
import './quality.css';

type Format = 'beir' | 'list';
type Target = 'existing' | 'new';

const readText = (input: HTMLInputElement | null) => (input?.files?.[0] ? input.files[0].text() : Promise.resolve(null));

export function EvaluatePage() {
  const [collections, setCollections] = useState<Collection[]>([]);
  const [format, setFormat] = useState<Format>('beir');
  const [listText, setListText] = useState('');
  const [set, setSet] = useState<EvalSet | null>(null);
  const [setProblem, setSetProblem] = useState<string | null>(null);
  const [target, setTarget] = useState<Target>('existing');
  const [collection, setCollection] = useState('');
  const [newName, setNewName] = useState('eval');
  const [chosen, setChosen] = useState<Set<string>>(new Set(VARIANTS.map((v) => v.id)));
  const [k, setK] = useState(5);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [ingest, setIngest] = useState<{ finished: number; total: number; report?: IngestReport } | null>(null);
  const [progress, setProgress] = useState<Record<string, { done: number; total: number }>>({});
  const [results, setResults] = useState<VariantResult[]>([]);
  const corpusRef = useRef<HTMLInputElement>(null);
  const queriesRef = useRef<HTMLInputElement>(null);
  const qrelsRef = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLInputElement>(null);
  const ctrl = useRef<AbortController | null>(null);
  const health = useCapabilities();

  useEffect(() => {
    const c = new AbortController();
    get<CollectionList>('/v1/collections', { signal: c.signal }).then(
      (r) => {
        setCollections(r.collections);
        setCollection((cur) => cur || r.collections[0]?.name || '');
      },
      (e) => {
        if (!c.signal.aborted) setError(e);
      },
    );
    return () => {
      c.abort();
      ctrl.current?.abort();
    };
  }, []);

  const load = async () => {
    setSetProblem(null);
    setSet(null);
    try {
      if (format === 'beir') {
        const [corpus, queries, qrels] = await Promise.all([readText(corpusRef.current), readText(queriesRef.current), readText(qrelsRef.current)]);
        if (!queries || !qrels) throw new SetError('choose queries.jsonl and qrels.tsv (corpus.jsonl too, to upload it into a new collection)');
        const s = beirSet({ ...(corpus ? { corpus } : {}), queries, qrels });
        setSet(s);
        if (s.corpus.length > 0) setTarget('new');
      } else {
        const raw = (await readText(listRef.current)) ?? listText;
        if (!raw.trim()) throw new SetError('choose a file or paste the pairs');
        setSet(listSet(raw));
        setTarget('existing');
      }
    } catch (err) {
      setSetProblem(err instanceof Error ? err.message : String(err));
    }
  };

  const run = async (e: Event) => {
    e.preventDefault();
    if (!set) return;
    const c = new AbortController();
    ctrl.current = c;
    setRunning(true);
    setError(null);
    setResults([]);
    setProgress({});
    setIngest(null);
    try {
      let name = collection;
      if (target === 'new') {
        name = newName.trim();
        const report = await ingestCorpus(name, set.corpus, (finished, total) => setIngest({ finished, total }), c.signal);
        setIngest({ finished: set.corpus.length, total: set.corpus.length, report });
      }
      const out: VariantResult[] = [];
      for (const v of selected) {
        const r = await runVariant(name, v, set, k, (done, total) => setProgress((p) => ({ ...p, [v.id]: { done, total } })), c.signal);
        out.push(r);
        setResults([...out]);
        if (r.status === 'cancelled') break;
      }
    } catch (err) {
      if (!c.signal.aborted) setError(err);
    } finally {
      setRunning(false);
    }
  };

  // The collection the run will search: the chosen one, or the one the corpus goes into (null: a
  // new one, which gets the server's current embedder).
  const targetName = target === 'existing' ? collection : newName.trim();
  const targetCollection = collections.find((c) => c.name === targetName) ?? null;
  const availability: Record<string, Availability> = Object.fromEntries(VARIANTS.map((v) => [v.id, variantAvailability(v, health, targetCollection)]));
  const selected = VARIANTS.filter((v) => chosen.has(v.id) && availability[v.id].available);

  const ok = results.filter((r) => r.status === 'ok' && r.metrics);
  const metricNames = ['nDCG@10', 'Recall@100', 'MRR@10', `Hit@${k}`];
  return (
    <section aria-labelledby="evaluate-title" data-testid="evaluate-page">
      <div class="page-head">
        <h1 id="evaluate-title">Evaluate</h1>
      </div>
      <p class="muted">
        Runs every query of a labelled set through the search API once per variant and scores the answers with the server's formulas
        (src/retrieval/eval/metrics.ts). Each query asks for the API's maximum of {API_TOP_K} hits, so Recall@100 counts all 100.
      </p>
      <ErrorBanner error={error} />
      <form onSubmit={run} data-testid="evaluate-form">
        <div class="eval-grid">
          <fieldset>
            <legend>1. Evaluation set</legend>
            <div class="field">
              <label for="eval-format">Format</label>
              <select id="eval-format" value={format} onChange={(e) => { setFormat((e.target as HTMLSelectElement).value as Format); setSet(null); }} data-testid="eval-format">
                <option value="beir">BEIR (corpus.jsonl, queries.jsonl, qrels.tsv)</option>
                <option value="list">list of {'{question, expected}'} pairs</option>
              </select>
            </div>
            {format === 'beir' ? (
              <>
                <div class="field">
                  <label for="eval-corpus">corpus.jsonl (optional: to upload it)</label>
                  <input id="eval-corpus" type="file" accept=".jsonl,.json,application/json" ref={corpusRef} data-testid="eval-corpus" />
                </div>
                <div class="field">
                  <label for="eval-queries">queries.jsonl</label>
                  <input id="eval-queries" type="file" accept=".jsonl,.json,application/json" ref={queriesRef} data-testid="eval-queries" />
                </div>
                <div class="field">
                  <label for="eval-qrels">qrels.tsv</label>
                  <input id="eval-qrels" type="file" accept=".tsv,.txt,text/tab-separated-values" ref={qrelsRef} data-testid="eval-qrels" />
                </div>
              </>
            ) : (
              <>
                <div class="field">
                  <label for="eval-list-file">Pairs file (JSON or JSON Lines)</label>
                  <input id="eval-list-file" type="file" accept=".json,.jsonl" ref={listRef} data-testid="eval-list-file" />
                </div>
                <div class="field">
                  <label for="eval-list-text">or paste them</label>
                  <textarea
                    id="eval-list-text"
                    rows={4}
                    placeholder='[{"question": "…", "expected": "report.pdf"}, {"question": "…", "expected_chunk_id": 42}]'
                    value={listText}
                    onInput={(e) => setListText((e.target as HTMLTextAreaElement).value)}
                    data-testid="eval-list-text"
                  />
                </div>
              </>
            )}
            <button type="button" class="secondary" onClick={load} data-testid="eval-load">
              Load set
            </button>
            {setProblem ? (
              <p class="item-error" role="alert" data-testid="eval-set-error">
                {setProblem}
              </p>
            ) : null}
            {set ? (
              <p data-testid="eval-set-summary" aria-live="polite">
                {set.queries.length} queries, {[...set.qrels.values()].reduce((n, m) => n + m.size, 0)} judgements ({set.level}s)
                {set.corpus.length ? `, ${set.corpus.length} corpus documents` : ''}
              </p>
            ) : null}
          </fieldset>
          <fieldset>
            <legend>2. Collection</legend>
            <label class="check">
              <input type="radio" name="eval-target" checked={target === 'existing'} onChange={() => setTarget('existing')} data-testid="eval-target-existing" />
              an existing collection
            </label>
            <label class="check">
              <input type="radio" name="eval-target" checked={target === 'new'} disabled={!set?.corpus.length} onChange={() => setTarget('new')} data-testid="eval-target-new" />
              upload the corpus into a collection
            </label>
            {target === 'existing' ? (
              <div class="field">
                <label for="eval-collection">Collection</label>
                <select id="eval-collection" value={collection} onChange={(e) => setCollection((e.target as HTMLSelectElement).value)} data-testid="eval-collection">
                  {collections.length === 0 ? <option value="">no collections yet</option> : null}
                  {collections.map((c) => (
                    <option key={c.name} value={c.name}>
                      {c.name} ({c.stats.documents} docs, {c.embedder ? 'embedded' : 'no embedder'})
                    </option>
                  ))}
                </select>
                <span class="muted small">Documents are matched to corpus ids by file name (e.g. “d1.txt” is corpus id d1), or by document id or source.</span>
              </div>
            ) : (
              <div class="field">
                <label for="eval-new-name">New or existing collection name</label>
                <input id="eval-new-name" required pattern="[a-z0-9][a-z0-9_\-]{0,63}" value={newName} onInput={(e) => setNewName((e.target as HTMLInputElement).value)} data-testid="eval-new-name" />
                <span class="muted small">Each corpus document is uploaded as “&lt;id&gt;.txt”; unchanged ones are skipped.</span>
              </div>
            )}
          </fieldset>
          <fieldset>
            <legend>3. Variants</legend>
            {VARIANTS.map((v) => {
              const a = availability[v.id];
              return (
                <div key={v.id}>
                  <label class="check" style={{ display: 'flex' }}>
                    <input
                      type="checkbox"
                      checked={chosen.has(v.id) && a.available}
                      disabled={!a.available}
                      aria-describedby={a.reason ? `eval-variant-reason-${v.id}` : undefined}
                      onChange={(e) => {
                        const next = new Set(chosen);
                        if ((e.target as HTMLInputElement).checked) next.add(v.id);
                        else next.delete(v.id);
                        setChosen(next);
                      }}
                      data-testid={`eval-variant-${v.id}`}
                    />
                    {v.label}
                  </label>
                  {a.reason ? (
                    <p id={`eval-variant-reason-${v.id}`} class="muted small" style={{ margin: '0 0 0.5rem 1.5rem' }} title={a.reason} data-testid={`eval-variant-reason-${v.id}`}>
                      unavailable: {shortReason(a.reason)}
                    </p>
                  ) : null}
                </div>
              );
            })}
            <div class="field">
              <label for="eval-k">K for Hit@K</label>
              <input id="eval-k" type="number" min={1} max={API_TOP_K} value={k} onInput={(e) => setK(Math.max(1, Math.min(API_TOP_K, Number((e.target as HTMLInputElement).value) || 5)))} data-testid="eval-k" />
            </div>
            <div class="actions">
              <button type="submit" disabled={!set || running || selected.length === 0 || (target === 'existing' && !collection)} data-testid="eval-run">
                {running ? 'Running…' : 'Run evaluation'}
              </button>
              {running ? (
                <button type="button" class="secondary" onClick={() => ctrl.current?.abort()} data-testid="eval-cancel">
                  Cancel
                </button>
              ) : null}
            </div>
          </fieldset>
        </div>
      </form>
      {ingest ? (
        <ProgressBar
          value={ingest.total ? ingest.finished / ingest.total : 1}
          label="Uploading the corpus"
          status={ingest.report ? `${ingest.report.done} ingested, ${ingest.report.skipped} unchanged, ${ingest.report.failed} failed` : `${ingest.finished}/${ingest.total}`}
          tone={ingest.report ? (ingest.report.failed ? 'fail' : 'ok') : undefined}
          testId="eval-ingest-progress"
        />
      ) : null}
      {ingest?.report?.errors.length ? (
        <ul class="item-error">
          {ingest.report.errors.map((x) => (
            <li key={x}>{x}</li>
          ))}
        </ul>
      ) : null}
      {Object.keys(progress).length ? (
        <div class="jobs">
          {VARIANTS.filter((v) => progress[v.id]).map((v) => {
            const p = progress[v.id];
            const r = results.find((x) => x.variant.id === v.id);
            return (
              <ProgressBar
                key={v.id}
                value={r && r.status !== 'ok' ? 1 : p.total ? p.done / p.total : 1}
                label={v.label}
                status={r ? r.status : `${p.done}/${p.total} queries`}
                tone={r ? (r.status === 'ok' ? 'ok' : 'fail') : undefined}
                testId={`eval-progress-${v.id}`}
              />
            );
          })}
        </div>
      ) : null}
      {results.length ? (
        <>
          <h2>Results</h2>
          <div class="table-wrap">
            <table data-testid="eval-results">
              <caption class="sr-only">Metrics and latency per retrieval variant</caption>
              <thead>
                <tr>
                  <th scope="col">Variant</th>
                  <th scope="col" class="num">nDCG@10</th>
                  <th scope="col" class="num">Recall@100</th>
                  <th scope="col" class="num">MRR@10</th>
                  <th scope="col" class="num">Hit@{k}</th>
                  <th scope="col" class="num">Queries</th>
                  <th scope="col" class="num">Mean latency</th>
                  <th scope="col" class="num">p50 / p95</th>
                  <th scope="col" class="num">Server mean</th>
                </tr>
              </thead>
              <tbody>
                {results.map((r) => (
                  <tr key={r.variant.id} data-testid="eval-row" data-variant={r.variant.id} data-status={r.status}>
                    <th scope="row">{r.variant.label}</th>
                    {r.status === 'ok' && r.metrics ? (
                      <>
                        <td class="num" data-metric="ndcg_at_10">{r.metrics.ndcg_at_10.toFixed(4)}</td>
                        <td class="num" data-metric="recall_at_100">{r.metrics.recall_at_100.toFixed(4)}</td>
                        <td class="num" data-metric="mrr_at_10">{r.metrics.mrr_at_10.toFixed(4)}</td>
                        <td class="num" data-metric="hit_at_k">{r.metrics.hit_at_k.toFixed(4)}</td>
                        <td class="num">{r.metrics.queries}</td>
                        <td class="num">{fmtMs(r.latency!.mean_ms)}</td>
                        <td class="num">
                          {fmtMs(r.latency!.p50_ms)} / {fmtMs(r.latency!.p95_ms)}
                        </td>
                        <td class="num">{fmtMs(r.server_latency!.mean_ms)}</td>
                      </>
                    ) : (
                      <td colSpan={8} class="unavailable" data-testid="eval-unavailable">
                        <strong>{r.status}</strong>
                        {r.code ? <code> {r.code}</code> : null}: {r.reason ?? 'stopped'}
                        {r.request_id ? <span class="muted small"> (request id {r.request_id})</span> : null}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {ok.length ? (
            <GroupedBars
              title={`Metrics per variant: ${ok.map((r) => `${r.variant.label} nDCG@10 ${r.metrics!.ndcg_at_10.toFixed(3)}`).join(', ')}`}
              groups={metricNames}
              series={ok.map((r) => ({ name: `${r.variant.label} (${fmtMs(r.latency!.mean_ms)}/query)`, values: [r.metrics!.ndcg_at_10, r.metrics!.recall_at_100, r.metrics!.mrr_at_10, r.metrics!.hit_at_k] }))}
            />
          ) : null}
        </>
      ) : null}
    </section>
  );
}
