/**
 * A document deleted by a caller while its ingestion job is still downloading it: the item fails
 * with a reason that says so (not an internal "not found in collection <id>"), the document stays
 * deleted, and nothing of it reaches search.
 */
import t from 'tap';
import { startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';

t.test('deleting a document during its ingestion: item failed with a plain reason, document gone', async (t) => {
  const { kb, server } = await startKb(t);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let requested!: () => void;
  const hit = new Promise<void>((r) => (requested = r));
  server.route('/slow.txt', (_q, res) => {
    requested();
    void gate.then(() => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(TEXT_DOC('narwhal'));
    });
  });

  kb.createCollection('del', '');
  const job = await kb.addDocuments('del', { urls: [`${server.origin}/slow.txt`] });
  await hit;
  let docId: string | null = null;
  for (let i = 0; i < 200 && !docId; i++) {
    docId = kb.getJob(job.id).items[0]!.document_id;
    if (!docId) await new Promise((r) => setTimeout(r, 20));
  }
  t.ok(docId, 'the item has its document while downloading');
  await kb.deleteDocument('del', docId!);
  release();

  const ended = await waitEnded(kb, job);
  const item = ended.items[0]!;
  t.equal(item.stage, 'failed');
  t.equal(item.error?.code, 'NOT_FOUND');
  t.match(item.error?.message, /deleted during ingestion/);
  t.notMatch(item.error?.message, /collection \d/);
  t.throws(() => kb.getDocument('del', docId!), { code: 'NOT_FOUND' }, 'stays deleted');
  const res = await kb.search('del', { query: 'narwhal' }, { signal: AbortSignal.timeout(30_000) });
  t.equal(res.results.length, 0, 'nothing of it is searchable');
  t.equal(res.confidence, 'none');
});
