// A plain data table: a caption for screen readers, header cells with scope, an empty-state row.
import type { ComponentChildren } from 'preact';

export interface Column<T> {
  key: string;
  label: string;
  render: (row: T) => ComponentChildren;
  numeric?: boolean;
}

export function Table<T>({ columns, rows, caption, empty, rowKey, testId, rowTestId }: {
  columns: Column<T>[];
  rows: T[];
  caption: string;
  empty?: string;
  rowKey: (row: T) => string | number;
  testId?: string;
  rowTestId?: string;
}) {
  return (
    <div class="table-wrap">
      <table data-testid={testId}>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c.key} class={c.numeric ? 'num' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} class="muted">
                {empty ?? 'Nothing here yet.'}
              </td>
            </tr>
          ) : (
            rows.map((r) => (
              <tr key={rowKey(r)} data-testid={rowTestId} data-key={String(rowKey(r))}>
                {columns.map((c) => (
                  <td key={c.key} class={c.numeric ? 'num' : undefined}>
                    {c.render(r)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
