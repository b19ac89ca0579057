/** PowerPoint presentations (PPTX and its variants; the extraction code is in pptx.ts). */
import { SENTENCE } from '../shared/chunk-profile.ts';
import { defineFormat } from '../shared/descriptor.ts';
import { hasZipSignature } from '../shared/signatures.ts';

declare module '../shared/types.ts' {
  interface DocumentKinds {
    pptx: true;
  }
}

const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';

export const PPTX_FORMAT = defineFormat({
  id: 'pptx',
  kinds: {
    pptx: {
      expected: 'a PowerPoint presentation (PPTX)',
      description: 'PowerPoint presentations',
      chunking: { size: 800, overlap: 150, separators: ['\n--- Slide ', '\n\n', '\n', ...SENTENCE] },
      extract: async (input) => (await import('./pptx.ts')).extractPptx(input),
    },
  },
  formats: {
    pptx: {
      kind: 'pptx',
      label: 'a PowerPoint presentation (PPTX)',
      mime: PPTX,
      mediaTypes: [PPTX, 'application/vnd.ms-powerpoint.presentation.macroenabled.12'],
      extensions: ['pptx', 'pptm', 'ppsx', 'potx'],
    },
  },
  // As for DOCX: a declared PPTX in an unreadable zip goes to the extractor for the precise error.
  magic: (e) => {
    if (!hasZipSignature(e.bytes)) return undefined;
    const ooxml = e.ooxml();
    return ooxml === 'pptx' || (ooxml === null && e.hint === 'pptx') ? 'pptx' : undefined;
  },
});
