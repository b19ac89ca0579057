/**
 * Reading a tool's input from an upload request: multipart (field `file`, other fields as form
 * fields) or a raw body with any non-JSON Content-Type (other fields in the querystring). The URL
 * field is dropped from the schema when a file is present; everything else is validated with the
 * same rules as a JSON call.
 */
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import type { TObject } from 'typebox';
import { toolError } from '../errors.ts';
import type { UploadedFile } from '../call-context.ts';
import { cleanFilename, filenameFromDisposition } from '../documents/filename.ts';
import { checkInput, formatIssue, omitProperty } from './validate-input.ts';

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

/**
 * The form's parts. A second file trips the parser's limit of one file, which it reports as a
 * size error (413); it is an input error: one document per call.
 */
async function* oneFilePerCall<T>(parts: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* parts;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'FST_FILES_LIMIT') {
      throw toolError('VALIDATION_ERROR', `send one file per call: this form has more than one file (send the document as "${UPLOAD_FIELD}")`);
    }
    throw err;
  }
}

export interface UploadLimits {
  maxBytes: number;
}

export async function readUploadCall(
  request: FastifyRequest,
  schema: TObject,
  urlField: string,
  limits: UploadLimits,
): Promise<ToolCallInput> {
  const withoutUrl = omitProperty(schema, urlField);

  if (request.isMultipart()) {
    const fields: Record<string, unknown> = {};
    let upload: UploadedFile | undefined;
    const parts = request.parts({
      limits: { fileSize: limits.maxBytes, files: 1, fields: 32, fieldSize: 1024 * 1024, parts: 40 },
    });
    for await (const part of oneFilePerCall(parts)) {
      if (part.type === 'file') {
        if (part.fieldname !== UPLOAD_FIELD) {
          part.file.resume();
          throw toolError('VALIDATION_ERROR', `body/${part.fieldname} is not a file field: send the document as "${UPLOAD_FIELD}"`);
        }
        upload = { bytes: await part.toBuffer(), filename: cleanFilename(part.filename), contentType: part.mimetype || undefined };
      } else {
        fields[part.fieldname] = part.value;
      }
    }
    if (!upload) return { input: validated(schema, fields, 'body', true) };
    if (fields[urlField] !== undefined && fields[urlField] !== '') bothGiven(urlField);
    // An empty URL field next to the file (HTML forms send every field) means "no URL".
    delete fields[urlField];
    if (upload.bytes.byteLength === 0) throw toolError('VALIDATION_ERROR', `body/${UPLOAD_FIELD} is empty`);
    return { input: validated(withoutUrl, fields, 'body', true), upload };
  }

  const body = request.body;
  if (Buffer.isBuffer(body)) {
    if (body.byteLength === 0) throw toolError('VALIDATION_ERROR', 'body is empty: send the document bytes or a JSON body');
    const query = (request.query ?? {}) as Record<string, unknown>;
    if (query[urlField] !== undefined) bothGiven(urlField);
    const contentType = request.headers['content-type'];
    return {
      input: validated(withoutUrl, query, 'querystring', true),
      upload: {
        bytes: body,
        contentType: typeof contentType === 'string' ? contentType : undefined,
        filename: filenameFromDisposition(request.headers['content-disposition']),
      },
    };
  }
  // JSON: the document is named by URL.
  return { input: validated(schema, body, 'body', false) };
}
