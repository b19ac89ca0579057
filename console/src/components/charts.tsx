// SVG charts for the Search and Evaluate pages: a stage waterfall (each stage a bar starting where
// the previous ended) and a grouped bar chart (one group per metric, one bar per variant). Plain
// SVG with <title> tooltips and a text table elsewhere on the page, so they need no library.
import type { WaterfallBar } from '../search/trace-model.ts';

/** Colours with at least 3:1 contrast against white (WCAG non-text contrast). */
export const SERIES_COLOURS = ['#1f5fa8', '#b3541e', '#2e7d32', '#6a1b9a', '#8a6d00', '#00838f'];

export function Waterfall({ bars, total, other, width = 860 }: { bars: WaterfallBar[]; total: number; other: number; width?: number }) {
  const labelW = 110;
  const valueW = 70;
  const rowH = 22;
  const plotW = width - labelW - valueW;
  const rows = other > 0 ? [...bars, { stage: 'other', start_ms: total - other, ms: other }] : bars;
  const scale = total > 0 ? plotW / total : 0;
  const height = rows.length * rowH + 24;
  return (
    <svg class="chart waterfall" role="img" aria-labelledby="waterfall-title" width={width} height={height} viewBox={`0 0 ${width} ${height}`} data-testid="waterfall">
      <title id="waterfall-title">{`Time per stage, ${fmtMs(total)} in all: ${rows.map((b) => `${b.stage} ${fmtMs(b.ms)}`).join(', ')}`}</title>
      {rows.map((b, i) => {
        const y = i * rowH + 4;
        const x = labelW + b.start_ms * scale;
        const w = Math.max(1.5, b.ms * scale);
        return (
          <g key={b.stage} data-testid="waterfall-bar" data-stage={b.stage}>
            <text x={labelW - 8} y={y + 13} text-anchor="end" class="chart-label">
              {b.stage}
            </text>
            <rect x={x} y={y} width={w} height={rowH - 8} rx={2} fill={b.stage === 'other' ? '#6b7280' : SERIES_COLOURS[i % SERIES_COLOURS.length]}>
              <title>{`${b.stage}: ${fmtMs(b.ms)} (from ${fmtMs(b.start_ms)})`}</title>
            </rect>
            <text x={Math.min(x + w + 6, width - valueW + 6)} y={y + 13} class="chart-value">
              {fmtMs(b.ms)}
            </text>
          </g>
        );
      })}
      <line x1={labelW} x2={labelW + plotW} y1={height - 16} y2={height - 16} stroke="#6b7280" />
      <text x={labelW} y={height - 3} class="chart-axis">
        0
      </text>
      <text x={labelW + plotW} y={height - 3} text-anchor="end" class="chart-axis">
        {fmtMs(total)}
      </text>
    </svg>
  );
}

export interface BarSeries {
  name: string;
  /** One value per group, 0-1; null where the series has no value (drawn as "n/a"). */
  values: (number | null)[];
}

export function GroupedBars({ groups, series, title, width = 720 }: { groups: string[]; series: BarSeries[]; title: string; width?: number }) {
  const top = 28;
  const bottom = 40;
  const left = 40;
  const plotH = 180;
  const height = top + plotH + bottom;
  const groupW = (width - left - 10) / Math.max(1, groups.length);
  const barW = Math.min(34, (groupW - 16) / Math.max(1, series.length));
  const y = (v: number) => top + plotH - v * plotH;
  return (
    <figure class="chart-figure">
      <svg class="chart bars" role="img" aria-labelledby="bars-title" width={width} height={height} viewBox={`0 0 ${width} ${height}`} data-testid="metrics-chart">
        <title id="bars-title">{title}</title>
        {[0, 0.25, 0.5, 0.75, 1].map((t) => (
          <g key={t}>
            <line x1={left} x2={width - 10} y1={y(t)} y2={y(t)} stroke={t === 0 ? '#6b7280' : '#e5e7eb'} />
            <text x={left - 6} y={y(t) + 4} text-anchor="end" class="chart-axis">
              {t.toFixed(2)}
            </text>
          </g>
        ))}
        {groups.map((g, gi) => {
          const gx = left + gi * groupW + (groupW - barW * series.length) / 2;
          return (
            <g key={g}>
              {series.map((s, si) => {
                const v = s.values[gi];
                const x = gx + si * barW;
                if (v === null || v === undefined) {
                  return (
                    <text key={s.name} x={x + barW / 2} y={y(0) - 4} text-anchor="middle" class="chart-axis">
                      n/a
                    </text>
                  );
                }
                return (
                  <rect key={s.name} x={x + 1} y={y(v)} width={barW - 2} height={Math.max(0.5, y(0) - y(v))} fill={SERIES_COLOURS[si % SERIES_COLOURS.length]} data-testid="metric-bar">
                    <title>{`${s.name} ${g}: ${v.toFixed(3)}`}</title>
                  </rect>
                );
              })}
              <text x={left + gi * groupW + groupW / 2} y={top + plotH + 18} text-anchor="middle" class="chart-label">
                {g}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption class="legend">
        {series.map((s, si) => (
          <span key={s.name} class="legend-item">
            <span class="swatch" style={{ background: SERIES_COLOURS[si % SERIES_COLOURS.length] }} aria-hidden="true" />
            {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

export function fmtMs(ms: number): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(2)} ms`;
}
