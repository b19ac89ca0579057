/**
 * The console's pre-selection (console/src/search/capabilities.ts) against real answers: the
 * variants it marks available for a collection are the ones the search API serves in that mode
 * (and reranked), the ones it marks unavailable are refused (MODEL_UNAVAILABLE) or not reranked,
 * with the server's reason, on a server without models and on one with the tiny test models.
 */
import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { denseAvailability, rerankAvailability, variantAvailability, type HealthCapabilities } from '../../console/src/search/capabilities.ts';
import { VARIANTS } from '../../console/src/eval/run-variants.ts';
import { buildTestApp, tempDir } from '../helper.ts';
import { MODELS_FIXTURE_DIR } from './model-fixtures.ts';

async function health(app: FastifyInstance): Promise<HealthCapabilities> {
  return (await app.inject('/v1/system/health')).json() as HealthCapabilities;
}

async function collectionWithText(t: Test, app: FastifyInstance, name: string): Promise<{ name: string; embedder: string | null }> {
  t.equal((await app.inject({ method: 'POST', url: '/v1/collections', payload: { name } })).statusCode, 201);
  const form = new FormData();
  form.append('wait_seconds', '60');
  form.append('file', new Blob(['River otters hunt crayfish along the riverbank at dusk.'], { type: 'text/plain' }), 'otter.txt');
  const req = new Request('http://x/', { method: 'POST', body: form });
  const res = await app.inject({ method: 'POST', url: `/v1/collections/${name}/documents`, headers: Object.fromEntries(req.headers), payload: Buffer.from(await req.arrayBuffer()) });
  t.equal(res.statusCode, 202);
  t.equal(res.json().status, 'succeeded', 'ingested');
  return (await app.inject(`/v1/collections/${name}`)).json() as { name: string; embedder: string | null };
}

/** What the search API does with each variant: served in its mode (and reranked when asked), or why not. */
async function served(t: Test, app: FastifyInstance, name: string, v: (typeof VARIANTS)[number]): Promise<boolean> {
  const res = await app.inject({ method: 'POST', url: `/v1/collections/${name}/search`, payload: { query: 'otters crayfish', mode: v.mode, rerank: v.rerank } });
  if (res.statusCode === 503) {
    t.equal(res.json().code, 'MODEL_UNAVAILABLE');
    return false;
  }
  t.equal(res.statusCode, 200);
  const r = res.json().retrieval as { mode: string; reranker: string };
  return r.mode === v.mode && (!v.rerank || r.reranker === 'used');
}

t.test('no models: lexical only; dense, hybrid and rerank unavailable with the server\'s reasons', async (t) => {
  const app = await buildTestApp(t, { env: { MODELS_DIR: tempDir(t) } });
  const h = await health(app);
  const plain = await collectionWithText(t, app, 'plain');
  t.equal(plain.embedder, null, 'indexed without an embedder');
  for (const v of VARIANTS) {
    const a = variantAvailability(v, h, plain);
    t.equal(a.available, await served(t, app, 'plain', v), `${v.id}: the console agrees with the API`);
    t.equal(a.available, v.id === 'lexical', `${v.id}: ${a.reason ?? 'available'}`);
  }
  t.match(denseAvailability(h, plain).reason, /the collection "plain" has no embeddings/);
  t.equal(denseAvailability(h, null).reason, h.features.dense_retrieval!.reason, 'a new collection: the server\'s own dense_retrieval reason');
  t.equal(rerankAvailability(h).reason, h.features.reranking!.reason);
  t.same(variantAvailability(VARIANTS[1]!, null, plain), { available: true, reason: null }, 'health unknown: nothing held back');
});

t.test('the test models: every variant available once the models are ready, and served', async (t) => {
  const app = await buildTestApp(t, { env: { MODELS_DIR: MODELS_FIXTURE_DIR, ONNX_THREADS: '1' } });
  let h = await health(app);
  const deadline = Date.now() + 120_000;
  while (!(h.features.dense_retrieval?.available && h.features.reranking?.available)) {
    if (Date.now() > deadline) throw new Error(`models did not load: ${JSON.stringify(h.models)}`);
    await new Promise((r) => setTimeout(r, 50));
    h = await health(app);
  }
  const embedded = await collectionWithText(t, app, 'embedded');
  t.type(embedded.embedder, 'string');
  t.ok(h.models.some((m) => m.id === embedded.embedder && m.state === 'ready'), 'the collection names its embedder as the model list does');
  for (const v of VARIANTS) {
    const a = variantAvailability(v, h, embedded);
    t.same(a, { available: true, reason: null }, `${v.id} available`);
    t.ok(await served(t, app, 'embedded', v), `${v.id} served`);
  }
  const stale = { name: 'old', embedder: 'onnx:Someone/retired-model:q8' };
  t.match(denseAvailability(h, stale), { available: false, reason: /\(onnx:Someone\/retired-model:q8\) is not configured on this server/ }, 'an embedder the model list does not name');
  t.match(denseAvailability({ ...h, models: [{ name: embedded.embedder!, id: embedded.embedder!, role: 'fast', kind: 'embedder', state: 'loading' }] }, embedded).reason, /still loading/);
});
