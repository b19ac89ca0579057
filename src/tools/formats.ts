/**
 * What each document kind is, for people and clients: extensions and media types. The list of
 * supported formats is generated from the registry (each tool's `formats`), so a format shows up
 * exactly when a registered tool reads it.
 */
import type { DocumentKind } from '../extractors/types.ts';
import type { AnyTool } from './define-tool.ts';

export interface FormatInfo {
  format: DocumentKind;
  description: string;
  extensions: string[];
  media_types: string[];
}

export const FORMAT_INFO: Readonly<Record<DocumentKind, Omit<FormatInfo, 'format'>>> = {
  pdf: { description: 'PDF documents (text layer; OCR for scanned pages when available)', extensions: ['.pdf'], media_types: ['application/pdf'] },
  docx: {
    description: 'Word documents',
    extensions: ['.docx'],
    media_types: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  },
  pptx: {
    description: 'PowerPoint presentations',
    extensions: ['.pptx'],
    media_types: ['application/vnd.openxmlformats-officedocument.presentationml.presentation'],
  },
  xlsx: {
    description: 'Excel workbooks',
    extensions: ['.xlsx', '.xlsm'],
    media_types: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  },
  xls: { description: 'Legacy Excel workbooks', extensions: ['.xls'], media_types: ['application/vnd.ms-excel'] },
  csv: { description: 'Comma- or tab-separated values', extensions: ['.csv', '.tsv'], media_types: ['text/csv', 'text/tab-separated-values'] },
  image: {
    description: 'Images (OCR)',
    extensions: ['.png', '.jpg', '.jpeg', '.gif', '.bmp', '.tif', '.tiff', '.webp'],
    media_types: ['image/png', 'image/jpeg', 'image/gif', 'image/bmp', 'image/tiff', 'image/webp'],
  },
  html: { description: 'Web pages', extensions: ['.html', '.htm'], media_types: ['text/html', 'application/xhtml+xml'] },
  text: { description: 'Plain text and Markdown', extensions: ['.txt', '.md', '.markdown'], media_types: ['text/plain', 'text/markdown'] },
};

export interface SupportedFormat extends FormatInfo {
  /** Registered tools that read this format. */
  tools: string[];
}

/** The formats read by at least one registered tool, in FORMAT_INFO order. */
export function supportedFormats(tools: readonly AnyTool[]): SupportedFormat[] {
  const out: SupportedFormat[] = [];
  for (const [format, info] of Object.entries(FORMAT_INFO) as [DocumentKind, Omit<FormatInfo, 'format'>][]) {
    const readers = tools.filter((t) => t.formats?.includes(format)).map((t) => t.name);
    if (readers.length > 0) out.push({ format, ...info, tools: readers });
  }
  return out;
}
