/**
 * Every error leaves as `{error, code, request_id}` with the HTTP status of its code. Validation
 * failures name the field; 5xx bodies never carry internals (those go to the log, with the stack).
 */
import fp from 'fastify-plugin';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { ERROR_STATUS, isToolError, type ErrorCode } from '../src/errors.ts';
import { isStackOverflow, MAX_JSON_BODY_LABEL, TOO_DEEP_MESSAGE } from '../src/json-limits.ts';
import type { ErrorBodySchema } from '../src/tools/schemas.ts';

export type ErrorBody = Static<typeof ErrorBodySchema>;

export function sendError(request: FastifyRequest, reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  const body: ErrorBody = { error: message, code, request_id: request.id };
  return reply.code(ERROR_STATUS[code]).type('application/json; charset=utf-8').send(body);
}

/**
 * Fastify's own errors (body parsing, limits, validation) and @fastify/multipart's mapped onto our
 * codes. src/tools/upload-input.ts words the multipart ones first; these are the fallback.
 */
function classify(err: FastifyError, contentType: string, maxUploadBytes: number): { code: ErrorCode; message: string } {
  if (isToolError(err)) return { code: err.code, message: err.message };
  if (err.validation) return { code: 'VALIDATION_ERROR', message: err.message };
  // Deep input that got past the nesting checks: an input error, and its raw message says nothing useful.
  if (isStackOverflow(err)) return { code: 'VALIDATION_ERROR', message: TOO_DEEP_MESSAGE };
  const status = err.statusCode ?? 500;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        code: 'PAYLOAD_TOO_LARGE',
        message: `The request body is larger than this server accepts: JSON bodies up to ${MAX_JSON_BODY_LABEL}, uploads up to MAX_UPLOAD_BYTES (${maxUploadBytes} bytes)`,
      };
    case 'FST_REQ_FILE_TOO_LARGE':
      return { code: 'PAYLOAD_TOO_LARGE', message: `The uploaded file is larger than MAX_UPLOAD_BYTES (${maxUploadBytes} bytes)` };
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return { code: 'PAYLOAD_TOO_LARGE', message: 'The multipart form has more parts than this server accepts' };
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
    case 'FST_MP_PREMATURE_CLOSE':
    case 'FST_PROTO_VIOLATION':
      return { code: 'VALIDATION_ERROR', message: `body is not a valid multipart/form-data request: ${err.message}` };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // Only routes without uploads refuse a Content-Type (upload routes take any as the document).
      return { code: 'UNSUPPORTED_FORMAT', message: `Unsupported Content-Type ${JSON.stringify(contentType.slice(0, 100))}: send application/json` };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'VALIDATION_ERROR', message: 'body must not be empty when Content-Type is application/json' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'VALIDATION_ERROR', message: 'body is not valid JSON' };
  }
  if (status === 413) return { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than this server accepts' };
  if (status === 415) return { code: 'UNSUPPORTED_FORMAT', message: err.message };
  if (status === 404) return { code: 'NOT_FOUND', message: err.message };
  if (status === 401) return { code: 'UNAUTHORIZED', message: err.message };
  if (status === 429) return { code: 'RATE_LIMITED', message: err.message };
  // Other client errors from Fastify (malformed bodies, bad headers): their messages describe the input.
  if (status >= 400 && status < 500) return { code: 'VALIDATION_ERROR', message: err.message };
  return { code: 'INTERNAL_ERROR', message: 'Internal server error' };
}

const errorHandlerPlugin: FastifyPluginAsync = async (app) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const contentType = typeof request.headers['content-type'] === 'string' ? request.headers['content-type'] : '';
    const { code, message } = classify(err, contentType, app.config.MAX_UPLOAD_BYTES);
    const status = ERROR_STATUS[code];
    if (status >= 500) request.log.error({ err, code }, 'request failed');
    else request.log.info({ code, error: message }, 'request rejected');
    if (isToolError(err) && err.retryAfterS !== undefined) reply.header('retry-after', err.retryAfterS);
    return sendError(request, reply, code, status >= 500 && !isToolError(err) ? 'Internal server error' : message);
  });

  app.setNotFoundHandler((request, reply) => {
    return sendError(request, reply, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0].slice(0, 200)} not found`);
  });
};

export default fp(errorHandlerPlugin, { name: 'error-handler', fastify: '5.x', dependencies: ['services'] });
