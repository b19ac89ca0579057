/**
 * The registry: every tool this server serves, in the order clients see them. REST routes, the MCP
 * tool list, the OpenAPI document and the MCP resources are all generated from this array.
 */
import type { AnyTool } from './define-tool.ts';
import { chunkDocumentTool } from './chunk-document.ts';
import { detectLanguageTool } from './detect-language.ts';
import { extractCsvTablesTool } from './extract-csv-tables.ts';
import { extractDocxTextTool } from './extract-docx-text.ts';
import { extractImageTextTool } from './extract-image-text.ts';
import { extractPdfTextTool } from './extract-pdf-text.ts';
import { extractPptxTextTool } from './extract-pptx-text.ts';
import { extractXlsxTablesTool } from './extract-xlsx-tables.ts';
import { getSystemHealthTool } from './get-system-health.ts';
import { manageCacheTool } from './manage-cache.ts';
import { processDocumentTool } from './process-document.ts';
import { querySpreadsheetTool } from './query-spreadsheet.ts';
import { retrieveChunksTool } from './retrieve-chunks.ts';

export const tools: readonly AnyTool[] = [
  processDocumentTool,
  chunkDocumentTool,
  retrieveChunksTool,
  querySpreadsheetTool,
  extractPdfTextTool,
  extractDocxTextTool,
  extractPptxTextTool,
  extractXlsxTablesTool,
  extractCsvTablesTool,
  extractImageTextTool,
  detectLanguageTool,
  getSystemHealthTool,
  manageCacheTool,
];
