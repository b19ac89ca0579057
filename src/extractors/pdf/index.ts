/** PDF documents: text layer, tables, and OCR for scanned pages (the extraction code is in pdf.ts). */
import { SENTENCE } from '../shared/chunk-profile.ts';
import { defineFormat } from '../shared/descriptor.ts';

declare module '../shared/types.ts' {
  interface DocumentKinds {
    pdf: true;
  }
}

export const PDF_FORMAT = defineFormat({
  id: 'pdf',
  kinds: {
    pdf: {
      expected: 'a PDF document',
      description: 'PDF documents (text layer; OCR for scanned pages when available)',
      chunking: { size: 1500, overlap: 300, separators: ['\n\n', '\n', ...SENTENCE] },
      extract: async (input, deps) => (await import('./pdf.ts')).extractPdf(input, deps),
    },
  },
  formats: {
    pdf: { kind: 'pdf', label: 'a PDF document', mime: 'application/pdf', mediaTypes: ['application/pdf', 'application/x-pdf'], extensions: ['pdf'] },
  },
  magic: (e) => (e.bytes.subarray(0, 1024).includes('%PDF-') ? 'pdf' : undefined),
});
