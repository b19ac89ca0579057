/**
 * Plain text, Markdown, JSON, XML and logs: what text bytes are when no other format claims them
 * (detection's fallback, so no sniff here). The extraction code is in text.ts.
 */
import { DEFAULT_CHUNKING } from '../shared/chunk-profile.ts';
import { defineFormat } from '../shared/descriptor.ts';

declare module '../shared/types.ts' {
  interface DocumentKinds {
    text: true;
  }
}

export const TEXT_FORMAT = defineFormat({
  id: 'text',
  kinds: {
    text: {
      expected: 'plain text',
      description: 'Plain text, Markdown, JSON, XML and logs',
      chunking: DEFAULT_CHUNKING,
      extract: async (input) => (await import('./text.ts')).extractText(input),
    },
  },
  formats: {
    text: {
      kind: 'text',
      label: 'plain text',
      mime: 'text/plain',
      mediaTypes: ['text/plain', 'text/markdown', 'application/json', 'application/xml', 'text/xml'],
      extensions: ['txt', 'text', 'md', 'markdown', 'json', 'xml', 'log'],
    },
    /** Zero bytes: read as (empty) text, named by nothing. */
    empty: { kind: 'text', label: 'an empty file', mime: 'text/plain', mediaTypes: [], extensions: [] },
  },
});
