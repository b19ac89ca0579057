/**
 * One extractor per document kind, from the format table (src/extractors/registry.ts). Each is
 * loaded on first use: the heavy parsers (pdf.js, jsdom, SheetJS, tesseract) cost start-up time
 * and memory only when a file of that kind arrives.
 */
import { EXTRACTORS } from '../extractors/registry.ts';
import type { Extractor } from '../extractors/shared/descriptor.ts';
import type { DocumentKind } from '../extractors/shared/types.ts';

export type { Extractor, ExtractorDeps } from '../extractors/shared/descriptor.ts';

export type ExtractorTable = Record<DocumentKind, Extractor>;

export const DEFAULT_EXTRACTORS: Readonly<ExtractorTable> = EXTRACTORS;
