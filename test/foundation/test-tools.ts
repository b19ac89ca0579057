/** Tools that exist only in tests, passed to buildApp as extraTools. Never in the registry. */
import { createHash } from 'node:crypto';
import Type from 'typebox';
import { defineTool } from '../../src/tools/define-tool.ts';
import { toolError } from '../../src/errors.ts';

export interface SlowProbe {
  started: boolean;
  aborted: boolean;
  abortReason?: unknown;
  finishedAt?: number;
}

/** Waits `ms` (default 10 s) unless its signal fires; records what happened to its signal. */
export function makeSlowTool(probe: SlowProbe) {
  return defineTool({
    name: 'test_slow',
    title: 'Slow test tool',
    description: 'Sleeps until its signal aborts (test only).',
    group: 'utility',
    input: Type.Object({ ms: Type.Optional(Type.Integer({ minimum: 0, default: 10_000 })) }),
    output: Type.Object({ slept_ms: Type.Integer() }),
    timeoutClass: 'utility',
    rest: { method: 'POST', path: '/v1/test/slow' },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    access: { action: 'search', what: 'call test tools' },
    async handler(input, { signal }) {
      probe.started = true;
      const ms = input.ms ?? 10_000;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          probe.aborted = true;
          probe.abortReason = signal.reason;
          probe.finishedAt = Date.now();
          reject(signal.reason);
        });
      });
      return { slept_ms: ms };
    },
  });
}

/** Echoes what it received, including an uploaded file's size, name, type and hash. */
export const uploadEchoTool = defineTool({
  name: 'test_upload',
  title: 'Upload echo test tool',
  description: 'Echoes its input and upload (test only).',
  group: 'documents',
  input: Type.Object(
    {
      document_url: Type.String({ maxLength: 2048, pattern: '^https?://' }),
      query: Type.Optional(Type.String({ maxLength: 100 })),
      top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
    },
    { additionalProperties: false },
  ),
  output: Type.Object({
    document_url: Type.Union([Type.String(), Type.Null()]),
    query: Type.Union([Type.String(), Type.Null()]),
    top_k: Type.Integer(),
    upload: Type.Union([
      Type.Object({
        bytes: Type.Integer(),
        sha256: Type.String(),
        filename: Type.Union([Type.String(), Type.Null()]),
        content_type: Type.Union([Type.String(), Type.Null()]),
      }),
      Type.Null(),
    ]),
  }),
  timeoutClass: 'document',
  rest: { method: 'POST', path: '/v1/test/upload' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: { action: 'search', what: 'call test tools' },
  upload: { urlField: 'document_url' },
  formats: ['csv', 'text'],
  async handler(input, { upload }) {
    return {
      document_url: input.document_url ?? null,
      query: input.query ?? null,
      top_k: input.top_k ?? 5,
      upload: upload
        ? {
            bytes: upload.bytes.byteLength,
            sha256: createHash('sha256').update(upload.bytes).digest('hex'),
            filename: upload.filename ?? null,
            content_type: upload.contentType ?? null,
          }
        : null,
    };
  },
});

/** Fails the way bugs fail: a plain Error whose message holds internals that must not leak. */
export const crashTool = defineTool({
  name: 'test_crash',
  title: 'Crashing test tool',
  description: 'Throws (test only).',
  group: 'utility',
  input: Type.Object({ coded: Type.Optional(Type.Boolean()) }),
  output: Type.Object({}),
  timeoutClass: 'utility',
  rest: { method: 'POST', path: '/v1/test/crash' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: { action: 'search', what: 'call test tools' },
  async handler(input) {
    if (input.coded) throw toolError('UNSUPPORTED_FORMAT', 'This is not a format we read');
    throw new Error('secret at /srv/app/internal/path.ts:42');
  },
});
