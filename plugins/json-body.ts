/**
 * JSON bodies: Fastify's own parser (prototype-poisoning checks, empty-body and syntax errors),
 * preceded by a nesting check (src/json-limits.ts), so a body nested thousands of levels deep is a
 * 400 VALIDATION_ERROR instead of a stack overflow in validation. Applies to every route that
 * takes JSON: the tool routes, the upload routes' JSON form and /mcp.
 */
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { toolError } from '../src/errors.ts';
import { jsonNestingExceeds, TOO_DEEP_MESSAGE } from '../src/json-limits.ts';

const jsonBodyPlugin: FastifyPluginAsync = async (app) => {
  const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (jsonNestingExceeds(body as string)) {
      done(toolError('VALIDATION_ERROR', TOO_DEEP_MESSAGE), undefined);
      return;
    }
    // Answers through `done`; the default parser's return value carries nothing.
    void parse(request, body as string, done);
  });
};

export default fp(jsonBodyPlugin, { name: 'json-body', fastify: '5.x' });
