/**
 * Reading a tool's input from an upload request: multipart (field `file`, other fields as form
 * fields) or a raw body with any non-JSON Content-Type (other fields in the querystring). The URL
 * field is dropped from the schema when a file is present; everything else is validated with the
 * same rules as a JSON call.
 */
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import type { TObject } from 'typebox';
import { isToolError, toolError } from '../errors.ts';
import type { UploadedFile } from '../call-context.ts';
import { cleanFilename, filenameFromDisposition } from '../documents/filename.ts';
import { checkInput, formatIssue, omitProperty } from './validate-input.ts';
import { RawUpload, readHashed, UploadTooLarge } from './upload-read.ts';

export const UPLOAD_FIELD = 'file';

export interface ToolCallInput {
  input: unknown;
  upload?: UploadedFile;
}

function validated(schema: TObject, fields: unknown, prefix: string, convert: boolean): unknown {
  const r = checkInput(schema, fields, { convert });
  if (!r.ok) throw toolError('VALIDATION_ERROR', formatIssue(r.issue, prefix));
  return r.value;
}

function bothGiven(urlField: string): never {
  throw toolError('VALIDATION_ERROR', `send either a file or ${urlField}, not both`);
}

/** Form limits besides the file size: a tool takes a handful of short fields and one file. */
const FORM_LIMITS = { files: 1, fields: 32, fieldSize: 1024 * 1024, parts: 40 } as const;

/** What busboy's messages for a malformed form mean (they are plain Errors, matched by text). */
function malformedDetail(message: string): string {
  if (/Boundary not found|Boundary required/i.test(message)) return 'Content-Type has no boundary parameter';
  if (/needle/i.test(message)) return 'the boundary parameter must be 1 to 70 characters';
  if (/unexpected end of multipart data/i.test(message)) return 'the body ends before the closing boundary';
  return '';
}

/**
 * Every failure while reading a form as a coded input error. busboy reports malformed bodies as
 * plain Errors (no code, no status) and @fastify/multipart its limits as 413s; a second file is
 * reported as a size error but is an input error: one document per call.
 */
export function multipartError(err: unknown, maxBytes: number): Error {
  if (isToolError(err)) return err;
  const code = (err as { code?: unknown }).code;
  switch (code) {
    case 'FST_FILES_LIMIT':
      return toolError('VALIDATION_ERROR', `send one file per call: this form has more than one file (send the document as "${UPLOAD_FIELD}")`);
    case 'FST_REQ_FILE_TOO_LARGE':
      return toolError('PAYLOAD_TOO_LARGE', `body/${UPLOAD_FIELD} is larger than MAX_UPLOAD_BYTES (${maxBytes} bytes)`);
    case 'FST_PARTS_LIMIT':
      return toolError('PAYLOAD_TOO_LARGE', `the form has more than ${FORM_LIMITS.parts} parts`);
    case 'FST_FIELDS_LIMIT':
      return toolError('PAYLOAD_TOO_LARGE', `the form has more than ${FORM_LIMITS.fields} fields`);
    case 'FST_PROTO_VIOLATION':
      return toolError('VALIDATION_ERROR', 'body has a form field named after an Object.prototype property (such as "__proto__")');
    case 'FST_MP_PREMATURE_CLOSE':
      return toolError('VALIDATION_ERROR', 'body ended before the multipart form was complete');
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return toolError('VALIDATION_ERROR', 'body has a form field declared as application/json that is not valid JSON');
  }
  const reason = malformedDetail(err instanceof Error ? err.message : '');
  const detail = reason ? ` (${reason})` : '';
  return toolError('VALIDATION_ERROR', `body is not a valid multipart/form-data request${detail}: send a form with a boundary, the document as "${UPLOAD_FIELD}" and the other fields as text fields`);
}

export interface UploadLimits {
  maxBytes: number;
}

async function readForm(request: FastifyRequest, maxBytes: number): Promise<{ fields: Record<string, unknown>; upload?: UploadedFile }> {
  const fields: Record<string, unknown> = {};
  let upload: UploadedFile | undefined;
  for await (const part of request.parts({ limits: { ...FORM_LIMITS, fileSize: maxBytes } })) {
    if (part.type === 'file') {
      if (part.fieldname !== UPLOAD_FIELD) {
        part.file.resume();
        throw toolError('VALIDATION_ERROR', `body/${part.fieldname} is not a file field: send the document as "${UPLOAD_FIELD}"`);
      }
      // Hashed as it arrives (src/tools/upload-read.ts); @fastify/multipart still enforces fileSize.
      const read = await readHashed(part.file, maxBytes).catch((err: unknown) => {
        if (err instanceof UploadTooLarge || part.file.truncated) throw toolError('PAYLOAD_TOO_LARGE', `body/${UPLOAD_FIELD} is larger than MAX_UPLOAD_BYTES (${maxBytes} bytes)`);
        throw err;
      });
      if (part.file.truncated) throw toolError('PAYLOAD_TOO_LARGE', `body/${UPLOAD_FIELD} is larger than MAX_UPLOAD_BYTES (${maxBytes} bytes)`);
      upload = { bytes: read.bytes, sha256: read.sha256, filename: cleanFilename(part.filename), contentType: part.mimetype || undefined };
    } else {
      // busboy cuts long values short and says so only in this flag: a cut value is never the one sent.
      if (part.valueTruncated) throw toolError('PAYLOAD_TOO_LARGE', `body/${part.fieldname} is longer than ${FORM_LIMITS.fieldSize} bytes`);
      fields[part.fieldname] = part.value;
    }
  }
  return { fields, upload };
}

export async function readUploadCall(
  request: FastifyRequest,
  schema: TObject,
  urlField: string,
  limits: UploadLimits,
): Promise<ToolCallInput> {
  const withoutUrl = omitProperty(schema, urlField);

  if (request.isMultipart()) {
    let form: { fields: Record<string, unknown>; upload?: UploadedFile };
    try {
      form = await readForm(request, limits.maxBytes);
    } catch (err) {
      throw multipartError(err, limits.maxBytes);
    }
    const { fields, upload } = form;
    if (!upload) return { input: validated(schema, fields, 'body', true) };
    if (fields[urlField] !== undefined && fields[urlField] !== '') bothGiven(urlField);
    // An empty URL field next to the file (HTML forms send every field) means "no URL".
    delete fields[urlField];
    // An empty file goes on like any other: the tool answers what it answers for the same file by
    // URL (e.g. 422 "The document has no text"), not a second, upload-only error.
    return { input: validated(withoutUrl, fields, 'body', true), upload };
  }

  const raw = request.body;
  const body = raw instanceof RawUpload ? raw.bytes : raw;
  if (Buffer.isBuffer(body)) {
    // A raw body of 0 bytes with a document Content-Type is an empty file: as above.
    const query = (request.query ?? {}) as Record<string, unknown>;
    if (query[urlField] !== undefined) bothGiven(urlField);
    const contentType = request.headers['content-type'];
    return {
      input: validated(withoutUrl, query, 'querystring', true),
      upload: {
        bytes: body,
        ...(raw instanceof RawUpload ? { sha256: raw.sha256 } : {}),
        contentType: typeof contentType === 'string' ? contentType : undefined,
        filename: filenameFromDisposition(request.headers['content-disposition']),
      },
    };
  }
  // JSON: the document is named by URL.
  return { input: validated(schema, body, 'body', false) };
}
