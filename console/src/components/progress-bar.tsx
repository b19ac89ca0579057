// An accessible progress bar (role="progressbar", aria-valuenow 0-100) with its label and a short status text.
export function ProgressBar({ value, label, status, tone, testId }: { value: number; label: string; status?: string; tone?: 'ok' | 'fail'; testId?: string }) {
  const pct = Math.max(0, Math.min(100, Math.round(value * 100)));
  return (
    <div class={`progress ${tone ?? ''}`} data-testid={testId}>
      <div class="progress-head">
        <span class="progress-label">{label}</span>
        <span class="muted">{status ? `${status} · ` : ''}{pct}%</span>
      </div>
      <div class="progress-track" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct} aria-valuetext={`${pct}%${status ? `, ${status}` : ''}`}>
        <div class="progress-fill" style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}
