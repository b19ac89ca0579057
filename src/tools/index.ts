/**
 * The registry: every tool this server serves, in the order clients see them. REST routes, the MCP
 * tool list, the OpenAPI document and the MCP resources are all generated from this array
 * (tools declared `mcp: false` are left out of the MCP tool list).
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
import { createCollectionTool } from './kb/create-collection.ts';
import { listCollectionsTool } from './kb/list-collections.ts';
import { getCollectionTool } from './kb/get-collection.ts';
import { deleteCollectionTool } from './kb/delete-collection.ts';
import { ingestDocumentsTool } from './kb/ingest-documents.ts';
import { listDocumentsTool } from './kb/list-documents.ts';
import { getDocumentTool } from './kb/get-document.ts';
import { listDocumentChunksTool } from './kb/list-document-chunks.ts';
import { deleteDocumentTool } from './kb/delete-document.ts';
import { reingestDocumentTool } from './kb/reingest-document.ts';
import { searchCollectionTool } from './kb/search-collection.ts';
import { getJobTool } from './kb/get-job.ts';
import { listJobsTool } from './kb/list-jobs.ts';
import { cancelJobTool } from './kb/cancel-job.ts';
import { listSourcesTool } from './kb/list-sources.ts';
import { addSourceTool } from './kb/add-source.ts';
import { updateSourceTool } from './kb/update-source.ts';
import { deleteSourceTool } from './kb/delete-source.ts';
import { syncSourceTool } from './kb/sync-source.ts';

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
  // The knowledge base (src/kb/): persistent collections; tools declared `mcp: false` are REST only.
  createCollectionTool,
  listCollectionsTool,
  getCollectionTool,
  deleteCollectionTool,
  ingestDocumentsTool,
  listDocumentsTool,
  getDocumentTool,
  listDocumentChunksTool,
  deleteDocumentTool,
  reingestDocumentTool,
  searchCollectionTool,
  getJobTool,
  listJobsTool,
  cancelJobTool,
  // Sources a collection is kept in step with (src/kb/sources/); update and delete are REST only.
  listSourcesTool,
  addSourceTool,
  updateSourceTool,
  deleteSourceTool,
  syncSourceTool,
];
