// Overview: server health, models and their state, features, formats, caches and rate limits
// (GET /v1/system/health and POST /v1/cache {action: "stats"}).
import { get, post } from '../api.ts';
import type { CacheReport, SystemHealth } from '../../../src/contract/health-schemas.ts';
import { ErrorBanner } from '../components/error-banner.tsx';
import { Table } from '../components/table.tsx';
import { useAsync } from '../use-async.ts';
import { dash, fmtBytes } from '../format.ts';

function StateBadge({ state }: { state: string }) {
  const tone = state === 'ready' || state === 'ok' || state === 'available' ? 'ok' : state === 'loading' || state === 'degraded' ? 'warn' : state === 'unavailable' || state === 'failed' || state === 'error' ? 'fail' : '';
  return <span class={`badge ${tone}`}>{state}</span>;
}

function detail(f: Record<string, unknown>): string {
  const skip = new Set(['available', 'reason']);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(f)) {
    if (skip.has(k) || v === null || typeof v === 'object') continue;
    parts.push(`${k.replace(/_/g, ' ')}: ${String(v)}`);
    if (parts.length >= 6) break;
  }
  return parts.join(' · ');
}

export function OverviewPage() {
  const health = useAsync((signal) => get<SystemHealth>('/v1/system/health', { signal }), []);
  const caches = useAsync((signal) => post<CacheReport>('/v1/cache', { action: 'stats' }, { signal }), []);
  const h = health.data;
  const layers = caches.data?.layers ?? [];
  return (
    <section aria-labelledby="overview-title" data-testid="overview-page">
      <div class="page-head">
        <h1 id="overview-title">Overview</h1>
        <button type="button" class="secondary" onClick={() => { health.reload(); caches.reload(); }}>
          Refresh
        </button>
      </div>
      <ErrorBanner error={health.error} />
      {health.loading && !h ? <p class="muted">Loading…</p> : null}
      {h ? (
        <>
          <div class="cards">
            <div class="card" data-testid="server-status">
              <div class="muted">Server</div>
              <div class="big">
                <StateBadge state={h.status} />
              </div>
              <div>
                {h.name} {h.version}
              </div>
              <div class="muted">up {Math.round(h.uptime_seconds)} s</div>
            </div>
            <div class="card">
              <div class="muted">Auth</div>
              <div class="big">{h.security.auth_enabled ? `${h.security.api_keys} key(s)` : 'off'}</div>
              <div class="muted">request timeout {h.security.request_timeout_seconds} s</div>
            </div>
            <div class="card" data-testid="rate-limits">
              <div class="muted">Rate limits</div>
              <div class="big">{h.security.rate_limit_rpm ? `${h.security.rate_limit_rpm}/min` : 'off'}</div>
              <div class="muted">per client; {h.security.global_rate_limit_rpm}/min in all</div>
            </div>
            <div class="card">
              <div class="muted">Uploads</div>
              <div class="big">{fmtBytes(h.security.max_upload_bytes)}</div>
              <div class="muted">largest upload</div>
            </div>
          </div>

          <h2>Models</h2>
          <Table
            testId="models-table"
            caption="Models and their state"
            rows={h.models}
            rowKey={(m) => m.id ?? m.name}
            columns={[
              { key: 'role', label: 'Role', render: (m) => m.role },
              { key: 'kind', label: 'Kind', render: (m) => m.kind },
              { key: 'id', label: 'Model', render: (m) => <code>{m.id ?? m.name}</code> },
              { key: 'state', label: 'State', render: (m) => <StateBadge state={m.state} /> },
              { key: 'why', label: 'Note', render: (m) => dash(m.reason) },
            ]}
          />

          <h2>Features</h2>
          <Table
            testId="features-table"
            caption="Features"
            rows={Object.entries(h.features)}
            rowKey={([k]) => k}
            columns={[
              { key: 'name', label: 'Feature', render: ([k]) => k.replace(/_/g, ' ') },
              { key: 'state', label: 'State', render: ([, f]) => <StateBadge state={f.available ? 'available' : 'unavailable'} /> },
              { key: 'detail', label: 'Detail', render: ([, f]) => <span class="muted">{f.reason ?? detail(f)}</span> },
            ]}
          />

          <h2>Formats</h2>
          <Table
            testId="formats-table"
            caption="Supported formats"
            rows={h.formats}
            rowKey={(f) => f.format}
            columns={[
              { key: 'format', label: 'Format', render: (f) => <code>{f.format}</code> },
              { key: 'description', label: 'Description', render: (f) => f.description },
            ]}
          />
        </>
      ) : null}

      <h2>Caches</h2>
      <ErrorBanner error={caches.error} />
      {caches.data ? (
        <Table
          testId="caches-table"
          caption="Cache layers"
          rows={layers}
          rowKey={(l) => l.name}
          columns={[
            { key: 'name', label: 'Layer', render: (l) => l.name },
            {
              key: 'stats',
              label: 'Statistics',
              render: (l) => (
                <span class="muted">
                  {Object.entries(l)
                    .filter(([k, v]) => k !== 'name' && (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean'))
                    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${k.includes('bytes') && typeof v === 'number' ? fmtBytes(v) : String(v)}`)
                    .join(' · ')}
                </span>
              ),
            },
          ]}
        />
      ) : null}
    </section>
  );
}
