/**
 * An ingestion request turned into a job's items: the input checks every surface answers the same
 * way (lists, limits, ocr), URLs parsed and de-duplicated, an upload named, a source sync's
 * deletions appended. Folder paths are resolved by the caller (they need the queue's room).
 */
import { createHash } from 'node:crypto';
import { parseDocumentUrl } from '../documents/url-policy.ts';
import { toolError } from '../errors.ts';
import { MAX_FILES_PER_REQUEST } from './local-files.ts';
import { COLLECTION_NAME_PATTERN, type AddDocumentsRequest, type NewItem } from './types.ts';

/** URLs one request may name. */
export const MAX_URLS_PER_REQUEST = 1_000;
const NAME_RE = new RegExp(COLLECTION_NAME_PATTERN);

export function isCollectionName(name: unknown): name is string {
  return typeof name === 'string' && NAME_RE.test(name);
}

export function checkName(name: string): void {
  if (!isCollectionName(name)) {
    throw toolError('VALIDATION_ERROR', `Collection name must match ${COLLECTION_NAME_PATTERN} (lowercase letters, digits, '-' and '_', starting with a letter or digit, 1-64 characters)`);
  }
}

/** VALIDATION_ERROR for what no job could run: wrong types, over the limits, nothing named. */
export function checkRequest(req: AddDocumentsRequest): void {
  const urls = req.urls ?? [];
  const paths = req.paths ?? [];
  if (!Array.isArray(urls) || !Array.isArray(paths)) throw toolError('VALIDATION_ERROR', 'urls and paths must be lists');
  const deletes = req.deletes ?? [];
  if (urls.length === 0 && paths.length === 0 && !req.upload && deletes.length === 0) throw toolError('VALIDATION_ERROR', 'Nothing to ingest: give urls, paths or an upload');
  if (urls.length > MAX_URLS_PER_REQUEST) throw toolError('VALIDATION_ERROR', `At most ${MAX_URLS_PER_REQUEST} URLs per request`);
  if (paths.length > MAX_FILES_PER_REQUEST) throw toolError('VALIDATION_ERROR', `At most ${MAX_FILES_PER_REQUEST} paths per request`);
  if ((req.include || req.exclude) && paths.length === 0) throw toolError('VALIDATION_ERROR', 'include and exclude apply to paths: give paths with them');
  checkOcr(req.ocr);
}

/** The request's URLs as items, parsed (DOWNLOAD_ERROR / VALIDATION_ERROR for a refused one) and each once. */
export function urlItems(urls: readonly unknown[]): NewItem[] {
  const items: NewItem[] = [];
  const seen = new Set<string>();
  for (const raw of urls) {
    if (typeof raw !== 'string') throw toolError('VALIDATION_ERROR', 'urls must be strings');
    const url = parseDocumentUrl(raw).href;
    if (seen.has(url)) continue;
    seen.add(url);
    items.push({ source: url, source_kind: 'url' });
  }
  return items;
}

/** A source sync's deletions (sources/sync.ts): items of the same job, after its documents, so they are counted, cancelled and resumed with it. */
export function deleteItems(req: AddDocumentsRequest): NewItem[] {
  return (req.deletes ?? []).map((d) => ({ source: d.source, source_kind: d.source_kind, delete: { document_id: d.document_id, reason: d.reason } }));
}

/** The upload's item: named by its filename, or by its content's hash when it has none. */
export function uploadItem(u: NonNullable<AddDocumentsRequest['upload']>, maxBytes: number): NewItem {
  if (!Buffer.isBuffer(u.bytes)) throw toolError('VALIDATION_ERROR', 'The uploaded file is missing');
  if (u.bytes.length > maxBytes) {
    throw toolError('PAYLOAD_TOO_LARGE', `The uploaded file is larger than the upload limit of ${maxBytes} bytes (MAX_UPLOAD_BYTES)`);
  }
  const filename = cleanFilename(u.filename) ?? `upload-${createHash('sha256').update(u.bytes).digest('hex').slice(0, 16)}`;
  return { source: filename, source_kind: 'upload', upload: { bytes: u.bytes, ...(u.contentType ? { contentType: u.contentType } : {}) } };
}

function checkOcr(ocr: AddDocumentsRequest['ocr']): void {
  if (ocr === undefined) return;
  if (typeof ocr !== 'object' || ocr === null) throw toolError('VALIDATION_ERROR', 'ocr must be an object');
  if (ocr.mode !== undefined && !['auto', 'always', 'never'].includes(ocr.mode)) throw toolError('VALIDATION_ERROR', 'ocr.mode must be auto, always or never');
  if (ocr.languages !== undefined && (!Array.isArray(ocr.languages) || ocr.languages.some((l) => typeof l !== 'string' || !/^[A-Za-z_]{3,16}$/.test(l)))) {
    throw toolError('VALIDATION_ERROR', 'ocr.languages must be tesseract language codes (e.g. ["eng", "deu"])');
  }
}

function cleanFilename(name: string | undefined): string | null {
  if (!name) return null;
  const base = name.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f]/g, '').trim();
  return base ? base.slice(0, 255) : null;
}
