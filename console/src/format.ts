// Small display helpers shared by the pages.
export const fmtBytes = (n: number | null | undefined) => {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
};
export const fmtDate = (s: string | null | undefined) => (s ? new Date(s).toLocaleString() : '—');
export const dash = (v: unknown) => (v === null || v === undefined || v === '' ? '—' : String(v));
export const pages = (a: number | null, b: number | null) => (a === null ? '—' : b !== null && b !== a ? `${a}–${b}` : String(a));
