/** Comma-, tab- and otherwise delimited tables (the extraction code is in csv.ts). */
import { TABLE_ROWS } from '../shared/chunk-profile.ts';
import { defineFormat } from '../shared/descriptor.ts';
import { looksLikeDelimited } from './sniff-csv.ts';

declare module '../shared/types.ts' {
  interface DocumentKinds {
    csv: true;
  }
}

const SNIFF_BYTES = 65_536;

export const CSV_FORMAT = defineFormat({
  id: 'csv',
  kinds: {
    csv: {
      expected: 'a CSV/TSV file',
      description: 'Comma- or tab-separated values',
      chunking: { size: 1200, overlap: 200, separators: TABLE_ROWS },
      extract: async (input) => (await import('./csv.ts')).extractCsv(input),
    },
  },
  formats: {
    csv: {
      kind: 'csv',
      label: 'a CSV/TSV table',
      mime: 'text/csv',
      mediaTypes: ['text/csv', 'text/tab-separated-values', 'application/csv', 'text/comma-separated-values'],
      extensions: ['csv', 'tsv', 'tab'],
    },
  },
  text: {
    // After HTML: a .csv name under a generic type still yields to an HTML sniff.
    rank: 20,
    claim: (e) => {
      if (e.fromType === 'csv') return { format: 'csv', by: 'content-type' };
      if (e.fromName === 'csv' && (e.genericType || e.fromType === 'xls')) return { format: 'csv', by: 'extension' };
      // Some servers label CSV as application/vnd.ms-excel; text bytes cannot be a real .xls.
      if (e.fromType === 'xls') return { format: 'csv', by: 'content-type' };
      if (e.fromName === undefined && e.genericType && looksLikeDelimited(e.head(SNIFF_BYTES), e.complete(SNIFF_BYTES))) return { format: 'csv', by: 'sniff' };
      return undefined;
    },
  },
});
