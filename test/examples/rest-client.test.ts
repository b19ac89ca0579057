/**
 * The typed REST client (openapi-fetch over the generated types) and examples/rest-client-demo.ts
 * against the real server: a typed health answer, a folder ingested and its job followed, a
 * search citing the page; errors come back as RagApiError with the server's code. The
 * @ts-expect-error lines are checked by `tsc --noEmit`: the types refuse what the API refuses.
 */
import t from 'tap';
import { createRagClient, ok, RagApiError, type RagRestClient } from '../../examples/client/rest-client.ts';
import type { SystemHealth } from '../../examples/client/wire-types.ts';
import { main, runDemo } from '../../examples/rest-client-demo.ts';
import { API_KEY, examplesWorld, HARBOUR_PDF } from './examples-world.ts';

/** Never called: compiled only, so a wrong path or body type is a type error. */
export function typeChecks(client: RagRestClient): void {
  // @ts-expect-error not a path of the API
  void client.GET('/v1/no-such-path');
  // @ts-expect-error top_k is a number
  void client.POST('/v1/collections/{name}/search', { params: { path: { name: 'x' } }, body: { query: 'q', top_k: 'three' } });
  // @ts-expect-error the job id is required
  void client.GET('/v1/jobs/{job_id}', { params: { path: {} } });
}

t.test('typed client: health, errors', async (t) => {
  const world = await examplesWorld(t);
  const client = createRagClient({ baseUrl: `${world.server}/`, apiKey: API_KEY });
  const health: SystemHealth = ok(await client.GET('/v1/system/health'));
  t.equal(health.status, 'ok');
  t.equal(health.name, 'rag-document-server');
  t.match(health.version, /^\d+\.\d+\.\d+/);
  t.equal(health.security.auth_enabled, true);
  t.equal(health.security.api_keys, 1);
  t.ok(health.formats.some((f) => f.format === 'pdf' || f.extensions.includes('.pdf')), 'pdf among the formats');

  const anonymous = createRagClient({ baseUrl: world.server });
  const refused = await anonymous.GET('/v1/system/health');
  t.equal(refused.response.status, 401);
  t.match(refused.error, { code: 'UNAUTHORIZED' }, 'the error body is typed too');
  t.throws(() => ok(refused), RagApiError);

  const notFound = await client.GET('/v1/jobs/{job_id}', { params: { path: { job_id: 'job_missing' } } });
  const err = (() => {
    try {
      ok(notFound);
    } catch (e) {
      return e;
    }
  })();
  t.match(err, { name: 'RagApiError', status: 404, code: 'NOT_FOUND' });
  t.match((err as RagApiError).requestId, /\S/, 'the request id, to find the call in the server log');
});

t.test('rest-client-demo: ingest, follow the job, search with page citations', async (t) => {
  const world = await examplesWorld(t);
  const lines: string[] = [];
  const result = await runDemo({
    server: world.server,
    apiKey: API_KEY,
    folder: world.folder,
    collection: 'rest-notes',
    question: 'crane hydraulic hose',
    pollMs: 20,
    log: (l) => lines.push(l),
  });
  t.equal(result.health.status, 'ok');
  t.equal(result.job?.status, 'succeeded');
  t.equal(result.job?.counts.done, 3);
  const top = result.search?.results[0];
  t.match(top, { title: HARBOUR_PDF.title, page_start: 2 });
  t.match(lines[0], /^rag-document-server \d+\.\d+\.\d+: ok, up \d+ s, auth on$/);
  t.ok(lines.some((l) => /^ {2}\[1\] Harbour Operations Manual, pp?\. 2/.test(l)), lines.join('\n'));

  const cliLines: string[] = [];
  const health = await main([world.server, '--api-key', API_KEY], (l) => cliLines.push(l));
  t.notOk(health.job, 'nothing ingested without --folder');
  t.notOk(health.search);
  t.equal(cliLines.length, 2, 'the health lines only');
  await t.rejects(main([world.server, '--api-key', API_KEY, 'a question']), /needs --collection or --folder/);
  await t.rejects(main([world.server, 'x', '--collection', 'rest-notes']), { code: 'UNAUTHORIZED' });
});
