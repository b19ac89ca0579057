/**
 * JSON bodies: Fastify's own parser (prototype-poisoning checks, empty-body and syntax errors),
 * preceded by a nesting check (src/json-limits.ts), so a body nested thousands of levels deep is a
 * 400 VALIDATION_ERROR instead of a stack overflow in validation. Applies to every route that
 * takes JSON: the tool routes, the upload routes' JSON form and /mcp.
 */
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { toolError } from '../src/errors.ts';
import { jsonNestingExceeds, MAX_JSON_DEPTH, TOO_DEEP_MESSAGE } from '../src/json-limits.ts';

/**
 * Whether the text has more than `max` opening brackets at all: a body with fewer cannot nest
 * deeper, and counting them with indexOf is a fraction of the character-by-character walk that
 * jsonNestingExceeds does (which is then only run on bodies that could fail it).
 */
export function hasMoreBracketsThan(text: string, max: number): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > max) return true;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > max) return true;
  return false;
}

const jsonBodyPlugin: FastifyPluginAsync = async (app) => {
  const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (hasMoreBracketsThan(body as string, MAX_JSON_DEPTH) && jsonNestingExceeds(body as string)) {
      done(toolError('VALIDATION_ERROR', TOO_DEEP_MESSAGE), undefined);
      return;
    }
    // Answers through `done`; the default parser's return value carries nothing.
    void parse(request, body as string, done);
  });
};

export default fp(jsonBodyPlugin, { name: 'json-body', fastify: '5.x' });
