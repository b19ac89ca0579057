/**
 * The one way tools get a document: fetch (download or upload, cached by URL) -> detect type ->
 * extract (cached by URL + content hash) -> URLs and language added. Concurrent calls for the
 * same URL download once and extract once; every layer is bounded.
 */
import { createHash } from 'node:crypto';
import type { CallContext, DocumentSource, UploadedFile } from '../call-context.ts';
import type { Config } from '../config.ts';
import type { CacheRegistry, DownloadedFile } from '../cache/cache-registry.ts';
import { isToolError, toolError } from '../errors.ts';
import type { OcrPool } from '../extractors/ocr/ocr-pool.ts';
import type { DocumentKind, ExtractInput, OcrRequest, PageProgress, ProcessedDocument } from '../extractors/shared/types.ts';
import { applyLanguage, completeDocument, defaultDetectLanguage, type DetectLanguage } from '../extraction/complete-document.ts';
import type { ExtractionPool } from '../extraction/extraction-pool.ts';
import type { FinishInfo } from '../extraction/protocol.ts';
import { createAddressPolicy } from './address-policy.ts';
import { detectType, type DetectedType } from './detect-type.ts';
import { FORMATS, KINDS } from './formats.ts';
import { abortError } from '../util/abort.ts';
import { errorText } from '../util/error-text.ts';
import { Downloader, type DownloaderOptions, type ProbeResponse } from './download.ts';
import { DEFAULT_EXTRACTORS, type ExtractorTable } from './extractor-table.ts';
import type { ResolveAll } from './guarded-lookup.ts';
import { SingleFlight } from '../util/single-flight.ts';
import { parseDocumentUrl } from './url-policy.ts';
import { extractLimitsFromConfig } from '../extractors/shared/limits.ts';

export interface FetchedDocument extends DownloadedFile {
  /** The normalised URL, or 'upload:' + file name. */
  source: string;
  /** The requested URL (normalised); absent for uploads. */
  url?: string;
  /** Served from the download cache. */
  fromCache: boolean;
}

export interface LoadedDocument {
  /** sha256(url)[:16] + '-' + sha256(content)[:16]; uploads: 'upload-' + sha256(content)[:16]. */
  key: string;
  contentSha256: string;
  /** The URL, or 'upload:' + file name. */
  source: string;
  type: DetectedType;
  doc: ProcessedDocument;
  /** Served from the document cache. */
  fromCache: boolean;
}

export interface LoadOptions {
  /** Kinds the caller can use; anything else is UNSUPPORTED_FORMAT naming what the file is. */
  expect?: readonly DocumentKind[];
  /**
   * What fetch() already returned for this same source: used as is, so a caller that looked at
   * the file first (the retrieval index) does not download or hash it a second time.
   */
  fetched?: FetchedDocument;
  /** OCR choices of the call (mode, languages, page cap); they change the output, so the cache key. */
  ocr?: OcrRequest;
  /** PDF page progress of this extraction (not reported when another call is already extracting it). */
  onProgress?: (p: PageProgress) => void;
}

export interface DocumentServiceDeps {
  config: Readonly<Config>;
  caches: CacheRegistry;
  ocr: OcrPool;
  /** DNS resolution for downloads (tests map names to addresses without real DNS). */
  lookup?: ResolveAll;
  /** Downloader tuning (retry delays, timeouts); policy and byte cap come from config. */
  download?: Partial<Omit<DownloaderOptions, 'policy' | 'maxBytes' | 'resolveAll'>>;
  /** Replaces extractors by kind (tests); these run in this process, never in the pool. */
  extractors?: Partial<ExtractorTable>;
  /**
   * Child processes that run the extractors (src/extraction/): an input that hangs, exhausts
   * memory or crashes costs a child, not this process. Without one, extraction runs inline.
   */
  pool?: ExtractionPool;
  /** Language detector; default src/language/detect.ts. */
  detectLanguage?: DetectLanguage;
  /** Distinct URLs / documents that may be in flight at once before calls stop coalescing. */
  maxInFlight?: number;
  /**
   * The download cache's second tier, shared by every process (Redis; src/cache/shared-download-cache.ts):
   * asked after the memory tier, before the origin; a failure there is a miss, never an error.
   */
  sharedDownloads?: SharedDownloadTier;
}

/** What the document service needs of a shared download tier. */
export interface SharedDownloadTier {
  get(url: string): Promise<DownloadedFile | undefined>;
  /** Stores in the background; the caller does not wait. */
  put(url: string, file: DownloadedFile): Promise<boolean>;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * Part of the key of PDFs and images read with other OCR choices than the server's defaults (those
 * keep the plain key): the same file read another way is another extraction.
 */
function ocrKeySuffix(ocr: OcrRequest | undefined, defaults: OcrRequest): string {
  if (!ocr) return '';
  const langs = (ocr.languages ?? []).join('+');
  if (ocr.mode === defaults.mode && langs === (defaults.languages ?? []).join('+') && ocr.maxPages === defaults.maxPages) return '';
  return `:ocr=${ocr.mode}/${langs}/${ocr.maxPages}`;
}

function describeExpected(kinds: readonly DocumentKind[]): string {
  const names = kinds.map((k) => KINDS[k].expected);
  return names.length <= 1 ? (names[0] ?? 'a document') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

export class DocumentService {
  private readonly config: Readonly<Config>;
  private readonly caches: CacheRegistry;
  private readonly ocr: OcrPool;
  private readonly downloader: Downloader;
  private readonly extractors: ExtractorTable;
  private readonly inlineKinds: ReadonlySet<string>;
  private readonly pool?: ExtractionPool;
  private readonly detectLanguageFn?: DocumentServiceDeps['detectLanguage'];
  private readonly downloads: SingleFlight<{ file: DownloadedFile; shared: boolean }>;
  private readonly shared?: SharedDownloadTier;
  private readonly extractions: SingleFlight<ProcessedDocument>;
  private counters = { downloads: 0, extractions: 0 };

  constructor(deps: DocumentServiceDeps) {
    this.config = deps.config;
    this.caches = deps.caches;
    this.ocr = deps.ocr;
    this.extractors = { ...DEFAULT_EXTRACTORS, ...deps.extractors };
    this.inlineKinds = new Set(Object.keys(deps.extractors ?? {}));
    if (deps.pool) this.pool = deps.pool;
    this.detectLanguageFn = deps.detectLanguage;
    if (deps.sharedDownloads) this.shared = deps.sharedDownloads;
    this.downloader = new Downloader({
      ...deps.download,
      policy: createAddressPolicy({
        allowPrivateNetworks: deps.config.ALLOW_PRIVATE_NETWORKS,
        allowedHosts: deps.config.allowedHosts,
      }),
      maxBytes: deps.config.MAX_DOWNLOAD_BYTES,
      ...(deps.lookup ? { resolveAll: deps.lookup } : {}),
    });
    this.downloads = new SingleFlight(deps.maxInFlight ?? 64);
    this.extractions = new SingleFlight(deps.maxInFlight ?? 64);
  }

  /** Network downloads and extractions actually run (cache hits and coalesced calls excluded). */
  stats(): { downloads: number; extractions: number; downloads_in_flight: number; extractions_in_flight: number } {
    return {
      ...this.counters,
      downloads_in_flight: this.downloads.size,
      extractions_in_flight: this.extractions.size,
    };
  }

  /**
   * One uncached GET with extra headers (conditional requests of source syncs and the site
   * crawler), through the same address policy, redirect checks and byte cap as every download.
   */
  probe(url: string, call: { headers: Record<string, string>; signal: AbortSignal }): Promise<ProbeResponse> {
    return this.downloader.probe(url, call);
  }

  /** The raw bytes of a URL (download cache, coalesced) or of an upload. */
  async fetch(source: DocumentSource, ctx: CallContext): Promise<FetchedDocument> {
    if ('upload' in source) return this.fromUpload(source.upload);
    const url = parseDocumentUrl(source.url).href;
    const cached = this.caches.download.get(url);
    if (cached) return { ...cached, source: url, url, fromCache: true };
    const { file, shared } = await this.downloads.run(url, ctx.signal, async (signal) => {
      // Another process may have downloaded it: the shared tier answers (or misses) within a short bound.
      const fromShared = await this.shared?.get(url);
      if (fromShared) {
        ctx.log?.debug({ url, bytes: fromShared.bytes.length }, 'download served by the shared cache');
        this.caches.download.set(url, fromShared);
        return { file: fromShared, shared: true };
      }
      this.counters.downloads++;
      const started = Date.now();
      const downloaded = await this.downloader.download(url, { signal, ...(ctx.log ? { log: ctx.log } : {}) });
      ctx.log?.debug({ url, bytes: downloaded.bytes.length, ms: Date.now() - started }, 'downloaded');
      this.caches.download.set(url, downloaded);
      void this.shared?.put(url, downloaded);
      return { file: downloaded, shared: false };
    });
    return { ...file, source: url, url, fromCache: shared };
  }

  /** Fetch, detect, extract (document cache, coalesced), then URLs and language. */
  async load(source: DocumentSource, ctx: CallContext, opts: LoadOptions = {}): Promise<LoadedDocument> {
    const file = opts.fetched ?? (await this.fetch(source, ctx));
    let type = detectType({
      bytes: file.bytes,
      ...(file.contentType ? { contentType: file.contentType } : {}),
      ...(file.filename ? { filename: file.filename } : {}),
    });
    let suffix = '';
    if (opts.expect && opts.expect.length > 0 && !opts.expect.includes(type.kind)) {
      if (type.kind === 'text' && type.format !== 'empty' && opts.expect.includes('csv')) {
        // Delimited text served as text/plain (or named .txt) is still a table to the CSV tools.
        type = { kind: 'csv', format: 'csv', mime: 'text/csv', by: 'sniff' };
        suffix = ':csv';
      } else {
        throw toolError(
          'UNSUPPORTED_FORMAT',
          `Unsupported format for this tool: expected ${describeExpected(opts.expect)}, but the file is ${FORMATS[type.format].label}`,
        );
      }
    }
    const ocr = this.ocrRequest(type.kind, opts.ocr);
    const key = `${file.url ? sha256(file.url).slice(0, 16) : 'upload'}-${file.sha256.slice(0, 16)}${suffix}${this.ocrKeyOf(ocr)}`;
    const cached = this.caches.document.get(key);
    if (cached) return { key, contentSha256: file.sha256, source: file.source, type, doc: cached, fromCache: true };
    const doc = await this.extractions.run(key, ctx.signal, async (signal) => {
      this.counters.extractions++;
      const started = Date.now();
      const extracted = await this.extract(file, type, signal, ocr, opts.onProgress);
      ctx.log?.debug({ key, kind: type.kind, chars: extracted.content.length, ms: Date.now() - started }, 'extracted');
      this.caches.document.set(key, extracted);
      return extracted;
    });
    return { key, contentSha256: file.sha256, source: file.source, type, doc, fromCache: false };
  }

  /**
   * The document-cache key part of these OCR choices for a PDF or image ('' for the defaults), so
   * that caches built on top of an extraction (retrieval indexes) tell the readings apart too.
   */
  ocrKeySuffix(ocr: OcrRequest | undefined): string {
    return this.ocrKeyOf(this.ocrRequest('pdf', ocr));
  }

  private ocrKeyOf(ocr: OcrRequest | undefined): string {
    return ocrKeySuffix(ocr, { mode: 'auto', languages: this.ocr.resolveJobLanguages(), maxPages: this.config.OCR_MAX_PAGES });
  }

  async close(): Promise<void> {
    await this.downloader.close();
  }

  private fromUpload(upload: UploadedFile): FetchedDocument {
    if (!upload || !Buffer.isBuffer(upload.bytes)) throw toolError('VALIDATION_ERROR', 'The uploaded file is missing');
    if (upload.bytes.length > this.config.MAX_UPLOAD_BYTES) {
      throw toolError('PAYLOAD_TOO_LARGE', `The uploaded file is larger than the upload limit of ${this.config.MAX_UPLOAD_BYTES} bytes (MAX_UPLOAD_BYTES)`);
    }
    return {
      bytes: upload.bytes,
      ...(upload.contentType ? { contentType: upload.contentType } : {}),
      ...(upload.filename ? { filename: upload.filename } : {}),
      sha256: upload.sha256 ?? sha256(upload.bytes),
      source: `upload:${upload.filename ?? 'file'}`,
      fromCache: false,
    };
  }

  /** The OCR request an extraction of this kind gets: defaults filled in, nothing for formats without OCR. */
  private ocrRequest(kind: DocumentKind, req: OcrRequest | undefined): OcrRequest | undefined {
    if (kind !== 'pdf' && kind !== 'image') return undefined;
    return {
      mode: req?.mode ?? 'auto',
      languages: this.ocr.resolveJobLanguages(req?.languages),
      maxPages: req?.maxPages ?? this.config.OCR_MAX_PAGES,
    };
  }

  private async extract(file: FetchedDocument, type: DetectedType, signal: AbortSignal, ocr?: OcrRequest, onProgress?: (p: PageProgress) => void): Promise<ProcessedDocument> {
    const input: ExtractInput = {
      ...(ocr ? { ocr } : {}),
      ...(type.kind === 'pdf' ? { pdfMaxPages: this.config.PDF_MAX_PAGES } : {}),
      limits: extractLimitsFromConfig(this.config),
      bytes: file.bytes,
      ...(file.filename ? { filename: file.filename } : {}),
      ...(file.finalUrl ?? file.url ? { sourceUrl: file.finalUrl ?? file.url } : {}),
      ...(type.kind === 'csv' || type.kind === 'text' || type.kind === 'html'
        ? file.contentType
          ? { contentType: file.contentType }
          : {}
        : { contentType: type.mime }),
      ...(onProgress ? { onProgress } : {}),
      signal,
    };
    const info: FinishInfo = {
      kind: type.kind,
      format: type.format,
      mime: type.mime,
      by: type.by,
      fileSize: file.bytes.length,
      sha256: file.sha256,
      ...(file.filename ? { filename: file.filename } : {}),
      ...(file.contentType ? { contentType: file.contentType } : {}),
    };
    const label = FORMATS[type.format].label;
    const pooled = this.pool && !this.inlineKinds.has(type.kind);
    let doc: ProcessedDocument;
    try {
      if (pooled) {
        const { signal: _signal, onProgress: _onProgress, ...plain } = input;
        doc = await this.pool!.extract({ kind: type.kind, input: plain, finish: info, label, ...(onProgress ? { onProgress } : {}) }, signal);
      } else {
        doc = await this.extractors[type.kind](input, { ocr: this.ocr });
      }
    } catch (err) {
      if (signal.aborted) throw abortError(signal, 'Extraction');
      if (isToolError(err)) throw err;
      throw toolError('PROCESSING_ERROR', `Could not read ${label}: ${errorText(err)}`, err);
    }
    if (signal.aborted) throw abortError(signal, 'Extraction');
    if (!pooled) return completeDocument(doc, info, this.detectLanguageFn ?? (await defaultDetectLanguage()));
    // The child detected the language with the default detector; an injected one has the last word.
    if (this.detectLanguageFn) applyLanguage(doc, this.detectLanguageFn);
    return doc;
  }
}
