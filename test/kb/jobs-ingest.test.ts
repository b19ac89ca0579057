/**
 * Ingestion through the facade on real services: documents by URL (text, HTML, CSV from a
 * loopback server), by upload and by path land as ready documents with chunks and are found by
 * search; the same content again is skipped; changed content replaces the old version (its old
 * words are gone from search); one bad document fails alone and the job is partial.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helper.ts';
import { CSV_DOC, HTML_DOC, serve, startKb, TEXT_DOC, waitEnded } from './jobs-fixtures.ts';

const signal = () => AbortSignal.timeout(30_000);

t.test('URL, upload and path documents are ingested, searchable, then skipped or replaced', async (t) => {
  const folder = fs.realpathSync(tempDir(t, 'kb-files-'));
  fs.writeFileSync(path.join(folder, 'local.md'), '# Local file\n\nThe pelican nests on the local shore.\n');
  const { kb, server } = await startKb(t, { ALLOWED_DIRS: folder });
  serve(server, '/zebra.txt', TEXT_DOC('zebra'), 'text/plain');
  serve(server, '/walrus.html', HTML_DOC('walrus'), 'text/html');
  serve(server, '/llama.csv', CSV_DOC('llama'), 'text/csv');

  const created = kb.createCollection('animals', 'test animals');
  t.match(created, { name: 'animals', description: 'test animals', stats: { documents: 0, chunks: 0 } });

  const events: string[] = [];
  const job = await kb.addDocuments('animals', {
    urls: [`${server.origin}/zebra.txt`, `${server.origin}/walrus.html`, `${server.origin}/llama.csv`],
    paths: [path.join(folder, 'local.md')],
    upload: { bytes: Buffer.from(TEXT_DOC('okapi')), filename: 'okapi.txt', contentType: 'text/plain' },
  });
  t.equal(job.status, 'queued', 'returns at once with a queued job');
  t.equal(job.items.length, 5);
  const unsubscribe = kb.subscribe(job.id, (e) => events.push(`${e.type}:${e.item?.stage ?? e.job?.status}`));
  const done = await waitEnded(kb, job);
  unsubscribe();
  t.equal(done.status, 'succeeded', JSON.stringify(done.items.map((i) => i.error)));
  t.same(done.counts, { total: 5, done: 5, skipped: 0, failed: 0, cancelled: 0 });
  t.ok(events.includes('progress:downloading') && events.includes('progress:extracting') && events.includes('item:done'), 'stage events seen');
  t.equal(events.at(-1), 'job:succeeded');
  t.ok(done.items.every((i) => i.document_id && i.finished_at && i.progress.chunks_total! > 0));
  t.same(kb.getJob(job.id).status, 'succeeded', 'the job is recorded');

  const docs = kb.listDocuments('animals', {});
  t.equal(docs.total, 5);
  t.ok(docs.items.every((d) => d.status === 'ready' && d.chunk_count > 0 && d.content_sha256));
  const kinds = Object.fromEntries(docs.items.map((d) => [d.source_kind === 'url' ? d.source.split('/').pop() : d.source_kind, d.type]));
  t.same(kinds, { 'zebra.txt': 'text', 'walrus.html': 'html', 'llama.csv': 'csv', path: 'text', upload: 'text' });
  const local = docs.items.find((d) => d.source_kind === 'path')!;
  t.equal(local.source_key, `path:${path.join(folder, 'local.md')}`);
  t.equal(kb.getCollection('animals').stats.documents, 5);

  for (const word of ['zebra', 'walrus', 'llama', 'pelican', 'okapi']) {
    const r = await kb.search('animals', { query: word }, { signal: signal() });
    t.ok(r.results.length > 0 && r.results[0]!.text.toLowerCase().includes(word), `search finds ${word}`);
  }

  // The same content again: skipped, nothing re-chunked.
  const again = await waitEnded(kb, await kb.addDocuments('animals', { urls: [`${server.origin}/zebra.txt`], paths: [folder] }));
  t.equal(again.status, 'succeeded');
  t.same(again.items.map((i) => [i.stage, i.note]), [['skipped', 'unchanged'], ['skipped', 'unchanged']]);
  const zebra = docs.items.find((d) => d.source.endsWith('/zebra.txt'))!;
  t.same(kb.getDocument('animals', zebra.id).history.map((h) => h.action), ['ingested', 'skipped']);

  // Changed content: replaced; the old words are gone from search.
  serve(server, '/zebra.txt', TEXT_DOC('giraffe'), 'text/plain');
  const changed = await waitEnded(kb, await kb.addDocuments('animals', { urls: [`${server.origin}/zebra.txt`] }));
  t.equal(changed.items[0]!.stage, 'done');
  t.equal(changed.items[0]!.document_id, zebra.id, 'the same document, a new version');
  const after = kb.getDocument('animals', zebra.id);
  t.equal(after.revision, 2);
  t.not(after.content_sha256, zebra.content_sha256);
  const old = await kb.search('animals', { query: 'zebra' }, { signal: signal() });
  t.notOk(old.results.some((h) => h.text.includes('zebra')), 'old version gone from search');
  const fresh = await kb.search('animals', { query: 'giraffe' }, { signal: signal() });
  t.equal(fresh.results[0]?.document_id, zebra.id, 'new version searchable');
  const chunks = kb.documentChunks('animals', zebra.id, {});
  t.ok(chunks.items.every((c) => !c.text.includes('zebra')) && chunks.total === after.chunk_count);

  // A forced re-ingest of unchanged content runs again.
  const re = await waitEnded(kb, await kb.reingestDocument('animals', zebra.id));
  t.equal(re.items[0]!.stage, 'done');
  t.equal(kb.getDocument('animals', zebra.id).revision, 3);

  // Deleting a document takes it out of search.
  const del = await kb.deleteDocument('animals', local.id);
  t.equal(del.document_id, local.id);
  t.ok(del.chunks > 0);
  const gone = await kb.search('animals', { query: 'pelican' }, { signal: signal() });
  t.notOk(gone.results.some((h) => h.document_id === local.id), 'deleted document gone from search');
  t.throws(() => kb.getDocument('animals', local.id), { code: 'NOT_FOUND' });
});

t.test('one bad document fails alone: the job is partial; all bad: failed', async (t) => {
  const { kb, server } = await startKb(t);
  serve(server, '/good.txt', TEXT_DOC('heron'), 'text/plain');
  server.route('/missing.txt', (_q, res) => {
    res.writeHead(404);
    res.end('no');
  });
  serve(server, '/binary.bin', Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x00, 0x10, 0x80]), 'application/octet-stream');
  const job = await kb.addDocuments('birds', { urls: [`${server.origin}/good.txt`, `${server.origin}/missing.txt`, `${server.origin}/binary.bin`], create: true });
  const done = await waitEnded(kb, job);
  t.equal(done.status, 'partial');
  t.same(done.items.map((i) => i.stage), ['done', 'failed', 'failed']);
  t.equal(done.items[1]!.error?.code, 'DOWNLOAD_ERROR');
  t.equal(done.items[2]!.error?.code, 'UNSUPPORTED_FORMAT');
  const failed = kb.listDocuments('birds', { status: 'failed' });
  t.equal(failed.total, 2, 'failed documents are recorded with their error');
  t.ok(failed.items.every((d) => d.error?.code));
  const r = await kb.search('birds', { query: 'heron' }, { signal: signal() });
  t.ok(r.results.length > 0, 'the good document is searchable');

  const allBad = await waitEnded(kb, await kb.addDocuments('birds', { urls: [`${server.origin}/missing.txt`] }));
  t.equal(allBad.status, 'failed');
  t.ok(allBad.reason);
});

t.test('coded errors: names, unknown collection, duplicate, nothing to add, ended job', async (t) => {
  const { kb } = await startKb(t);
  t.throws(() => kb.createCollection('Bad Name'), { code: 'VALIDATION_ERROR' });
  kb.createCollection('one');
  t.throws(() => kb.createCollection('one'), { code: 'CONFLICT' });
  t.throws(() => kb.getCollection('nope'), { code: 'NOT_FOUND' });
  await t.rejects(kb.addDocuments('nope', { urls: ['https://example.com/a.txt'] }), { code: 'NOT_FOUND' });
  await t.rejects(kb.addDocuments('one', {}), { code: 'VALIDATION_ERROR' });
  await t.rejects(kb.addDocuments('one', { urls: ['ftp://example.com/a'] }), { code: 'URL_NOT_ALLOWED' });
  await t.rejects(kb.addDocuments('one', { paths: ['/etc/passwd'] }), { code: 'URL_NOT_ALLOWED', message: /Local files are off/ });
  t.throws(() => kb.getJob('job_000000000000'), { code: 'NOT_FOUND' });
  t.throws(() => kb.cancelJob('job_000000000000'), { code: 'NOT_FOUND' });
  await t.rejects(kb.deleteDocument('one', 'doc_x'), { code: 'NOT_FOUND' });
  const removed = await kb.deleteCollection('one');
  t.same(removed, { name: 'one', documents: 0, chunks: 0 });
  t.throws(() => kb.getCollection('one'), { code: 'NOT_FOUND' });
});
