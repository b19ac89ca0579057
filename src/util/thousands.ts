/**
 * An integer with thousands separators, as `n.toLocaleString('en-US')` writes it ("1,000,000"),
 * without ICU: the first toLocaleString of a process builds a number formatter, about 9 ms that
 * the tool definitions' descriptions used to add to every start.
 */
export function thousands(n: number): string {
  const digits = String(Math.abs(Math.trunc(n)));
  return (n < 0 ? '-' : '') + digits.replace(/\B(?=(\d{3})+$)/g, ',');
}
