/** Web pages (the extraction code is in html.ts: jsdom, bounded by html-bounds.ts). */
import { PROSE } from '../shared/chunk-profile.ts';
import { defineFormat } from '../shared/descriptor.ts';
import { looksLikeHtml } from './sniff-html.ts';

declare module '../shared/types.ts' {
  interface DocumentKinds {
    html: true;
  }
}

export const HTML_FORMAT = defineFormat({
  id: 'html',
  kinds: {
    html: {
      expected: 'an HTML page',
      description: 'Web pages',
      chunking: { size: 1500, overlap: 300, separators: PROSE },
      extract: async (input) => (await import('./html.ts')).extractHtml(input, { baseUrl: input.sourceUrl }),
    },
  },
  formats: {
    html: { kind: 'html', label: 'an HTML page', mime: 'text/html', mediaTypes: ['text/html', 'application/xhtml+xml'], extensions: ['html', 'htm', 'xhtml'] },
  },
  text: {
    // An explicit HTML type wins; an explicit non-HTML text type or name (a .csv or .txt file that
    // happens to start with a tag) beats the sniff.
    rank: 10,
    claim: (e) => {
      if (e.fromType === 'html') return { format: 'html', by: 'content-type' };
      if (e.fromName === 'html' && e.genericType) return { format: 'html', by: 'extension' };
      if (!e.namesOtherText('html') && looksLikeHtml(e.head())) return { format: 'html', by: 'sniff' };
      return undefined;
    },
  },
});
