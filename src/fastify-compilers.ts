/**
 * Fastify's `schemaController.compilersFactory` from one validator and one serializer compiler.
 * Given at construction (not set later with setValidatorCompiler), they are the only ones Fastify
 * ever builds: its default Ajv and fast-json-stringify compilers are never loaded
 * (scripts/build.mjs keeps them out of the bundle). Used by the app (src/app.ts) and by the inner
 * app that describes its routes for OpenAPI (plugins/swagger.ts).
 */
import type { FastifySchemaCompiler, FastifySerializerCompiler, FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

export function fixedCompilers<S>(validator: FastifySchemaCompiler<S>, serializer: FastifySerializerCompiler<S>): CompilersFactory {
  // Fastify's types name Ajv's route definition for these factories; ours take Fastify's own.
  return { buildValidator: () => validator, buildSerializer: () => serializer } as unknown as CompilersFactory;
}
