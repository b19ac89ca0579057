/**
 * What a call into the services carries, and the document it names. The lowest shared layer:
 * services (documents, retrieval) take a CallContext, and the tools' ToolContext extends it, so no
 * service imports a tool type.
 */

/** A file sent by the caller instead of a URL (multipart field `file` or a raw body). */
export interface UploadedFile {
  bytes: Buffer;
  /** Hex SHA-256 of bytes when the reader computed it while the bytes arrived (so nobody hashes them again at once). */
  sha256?: string;
  filename?: string;
  contentType?: string;
}

/** The document a call names: a URL to download, or an uploaded file. */
export type DocumentSource = { url: string } | { upload: UploadedFile };

/** The part of a logger the services use (pino's Logger satisfies it). */
export interface CallLog {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface CallContext {
  /** Aborted on timeout or when the client goes away; pass it to every await that can take long. */
  signal: AbortSignal;
  log?: CallLog;
}
