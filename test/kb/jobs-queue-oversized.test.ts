/**
 * A job with more documents than INGEST_QUEUE_MAX can ever hold is refused as a 400-class
 * VALIDATION_ERROR that says how to split it, not as OVERLOADED (503 "retry later"), which would
 * never succeed however long the caller waited; a job that only has to wait is still OVERLOADED.
 */
import t from 'tap';
import { startKb } from './jobs-fixtures.ts';

t.test('a job larger than INGEST_QUEUE_MAX on an idle server: VALIDATION_ERROR, not OVERLOADED', async (t) => {
  const { kb, server } = await startKb(t, { INGEST_QUEUE_MAX: '2' });
  kb.createCollection('big');
  const urls = ['a', 'b', 'c'].map((n) => `${server.origin}/${n}.txt`);
  await t.rejects(kb.addDocuments('big', { urls }), { code: 'VALIDATION_ERROR', message: /INGEST_QUEUE_MAX 2\b.*split/ });
  t.equal(kb.listJobs({ collection: 'big' }).total, 0, 'no job recorded');
});
