/** Word documents (DOCX and its macro/template variants; the extraction code is in docx.ts). */
import { PROSE } from '../shared/chunk-profile.ts';
import { defineFormat } from '../shared/descriptor.ts';
import { hasZipSignature } from '../shared/signatures.ts';

declare module '../shared/types.ts' {
  interface DocumentKinds {
    docx: true;
  }
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export const DOCX_FORMAT = defineFormat({
  id: 'docx',
  kinds: {
    docx: {
      expected: 'a Word document (DOCX)',
      description: 'Word documents',
      chunking: { size: 1500, overlap: 300, separators: PROSE },
      extract: async (input) => (await import('./docx.ts')).extractDocx(input),
    },
  },
  formats: {
    docx: {
      kind: 'docx',
      label: 'a Word document (DOCX)',
      mime: DOCX,
      mediaTypes: [DOCX, 'application/vnd.ms-word.document.macroenabled.12'],
      extensions: ['docx', 'docm', 'dotx'],
    },
  },
  // A zip whose content types could not be read: a declared DOCX is trusted; the extractor gives
  // the precise error if the file is damaged.
  magic: (e) => {
    if (!hasZipSignature(e.bytes)) return undefined;
    const ooxml = e.ooxml();
    return ooxml === 'docx' || (ooxml === null && e.hint === 'docx') ? 'docx' : undefined;
  },
});
