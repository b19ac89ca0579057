/**
 * Ingestion with an embedder (the tiny ONNX test models): the collection's embedder is fixed at
 * its first embedded document and kept for later ones, progress counts chunks embedded, vectors
 * reach the dense index (dense search answers with the collection's embedder), and a
 * restart keeps the embedder.
 */
import t from 'tap';
import { MODELS_FIXTURE_DIR } from '../retrieval/model-fixtures.ts';
import { serve, startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';
import type { JobEvent } from '../../src/kb/types.ts';

t.test('the first embedded document fixes the embedder; chunks_embedded progress; dense search', async (t) => {
  const { kb, server, services } = await startKb(t, { MODELS_DIR: MODELS_FIXTURE_DIR }, {}, undefined, { startModels: true });
  await services.models.ready();
  const long = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} about the manatee and its habitat number ${i}.`).join('\n\n');
  serve(server, '/manatee.txt', long, 'text/plain');
  serve(server, '/dugong.txt', TEXT_DOC('dugong'), 'text/plain');
  const c = kb.createCollection('sea');
  t.equal(c.embedder, null);
  const events: JobEvent[] = [];
  const job = await kb.addDocuments('sea', { urls: [`${server.origin}/manatee.txt`] });
  kb.subscribe(job.id, (e) => events.push(e));
  const done = await waitEnded(kb, job);
  t.equal(done.status, 'succeeded', JSON.stringify(done.items[0]!.error));
  const fixed = kb.getCollection('sea');
  t.equal(fixed.embedder, services.models.embedderFor(done.items[0]!.progress.chunks_total!)?.id, 'embedder fixed');
  t.ok(fixed.dimension! > 0);
  const embedding = events.filter((e) => e.item?.stage === 'embedding');
  t.ok(embedding.length >= 2, 'embedding progress reported');
  t.equal(done.items[0]!.progress.chunks_embedded, done.items[0]!.progress.chunks_total, 'every chunk embedded');
  t.ok(events.every((e, i) => i === 0 || e.fraction >= events[i - 1]!.fraction), 'fraction never goes back');

  const second = await waitEnded(kb, await kb.addDocuments('sea', { urls: [`${server.origin}/dugong.txt`] }));
  t.equal(second.status, 'succeeded');
  t.equal(kb.getCollection('sea').embedder, fixed.embedder, 'later documents keep the embedder');

  const r = await kb.search('sea', { query: 'dugong', mode: 'dense' }, { signal: AbortSignal.timeout(30_000) });
  t.equal(r.retrieval.mode, 'dense');
  t.equal(r.retrieval.embedder, fixed.embedder);
  t.ok(r.results.length > 0, 'dense search answers from the vectors stored by the job');
});
