/**
 * A folder of the shared corpus ingested into a collection by path, through REST on a listening
 * server, as issue 10's "How it will be checked" walks it: a handful of mixed files (PDF, DOCX,
 * XLSX, HTML) picked from CORPUS_DIR with include globs, progress seen on the job's SSE stream, a
 * known phrase of one file found by search, that document deleted and gone from the results, an
 * unchanged file re-ingested (skipped) and a changed copy in a second allowed folder re-ingested
 * (replaced: same document, next revision, only the new text searchable).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, tempDir } from '../../helper.ts';
import { listenLoopback, parseSse, readSse } from '../../kb/surface-fixtures.ts';
import { CORPUS_DIR, corpusPath } from '../data-dirs.ts';

const FILES = ['pdf/test.pdf', 'docx/test.docx', 'xlsx/test.xlsx', 'html/test_wikipedia.html'];
/** From html/test_wikipedia.html.expected.json (must_include), so a search for it must find that file. */
const WIKI_PHRASE = 'Microsoft entered the operating system (OS) business in 1980 with its own version of Unix';

t.test('a corpus folder by path: progress, search, delete, skip unchanged, replace changed', async (t) => {
  const scratch = tempDir(t, 'kb-corpus-copy-');
  const app = await buildTestApp(t, { env: { ALLOWED_DIRS: `${CORPUS_DIR},${scratch}`, MODEL_DOWNLOADS: 'never', MODELS_DIR: tempDir(t, 'kb-no-models-') } });
  const origin = await listenLoopback(app);
  // Real requests to the listening server (app.inject after listen would carry a Host it refuses).
  const call = async (method: string, url: string, payload?: object) => {
    const res = await fetch(origin + url, { method, ...(payload ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) } : {}) });
    const body = await res.text();
    return { statusCode: res.status, body, json: () => JSON.parse(body) };
  };
  const post = (url: string, payload: object) => call('POST', url, payload);
  const get = (url: string) => call('GET', url);
  const jobEnded = async (id: string) => {
    for (;;) {
      const job = (await get(`/v1/jobs/${id}`)).json();
      if (['succeeded', 'partial', 'failed', 'cancelled'].includes(job.status)) return job;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const search = async (query: string) => {
    const res = await post('/v1/collections/corpus/search', { query, mode: 'lexical', top_k: 10 });
    t.equal(res.statusCode, 200, `search "${query}"`);
    return res.json() as { results: Array<{ document_id: string; source: string; text: string }>; confidence: string };
  };

  t.equal((await post('/v1/collections', { name: 'corpus' })).statusCode, 201);

  // The folder, narrowed to four mixed files by include globs; progress on the SSE stream.
  const added = await post('/v1/collections/corpus/documents', { paths: [CORPUS_DIR], include: FILES });
  t.equal(added.statusCode, 202, added.statusCode === 202 ? '202 with the job' : added.body);
  const jobId = added.json().id as string;
  const sse = await readSse(`${origin}/v1/jobs/${jobId}/events`);
  t.equal(sse.status, 200);
  const events = parseSse(sse.body);
  const kinds = events.map((e) => e.event);
  t.ok(kinds.includes('progress'), `progress events seen (${kinds.join(',')})`);
  t.equal(kinds.at(-1), 'job', 'the stream ends with the job event');
  t.equal(events.at(-1)?.data.job?.status, 'succeeded');
  const stages = new Set(events.filter((e) => e.event === 'progress').map((e) => e.data.item?.stage));
  t.ok(stages.has('extracting') || stages.has('chunking') || stages.has('indexing'), `stages reported: ${[...stages].join(',')}`);
  const job = await jobEnded(jobId);
  t.equal(job.status, 'succeeded', job.status === 'succeeded' ? 'job succeeded' : JSON.stringify(job.items.map((i: any) => [i.source, i.stage, i.error])));
  t.same(job.counts, { total: FILES.length, done: FILES.length, skipped: 0, failed: 0, cancelled: 0 });

  const docs = (await get('/v1/collections/corpus/documents')).json().items as Array<{ id: string; source: string; type: string; chunk_count: number }>;
  t.same(docs.map((d) => path.relative(fs.realpathSync(CORPUS_DIR), d.source)).sort(), [...FILES].sort(), 'one document per file, by real path');
  t.ok(docs.every((d) => d.chunk_count > 0), 'every document has chunks');
  const wiki = docs.find((d) => d.source.endsWith('test_wikipedia.html'))!;

  // A known phrase finds its file first.
  const found = await search(WIKI_PHRASE);
  t.equal(found.results[0]?.document_id, wiki.id, 'the Wikipedia page ranks first for its own sentence');
  t.match(found.results[0]?.text ?? '', /operating system/);

  // Deleted: gone from the results.
  const del = await call('DELETE', `/v1/collections/corpus/documents/${wiki.id}`);
  t.equal(del.statusCode, 200, del.statusCode === 200 ? 'deleted' : del.body);
  t.equal((await get(`/v1/collections/corpus/documents/${wiki.id}`)).statusCode, 404);
  const after = await search(WIKI_PHRASE);
  t.notOk(after.results.some((h) => h.document_id === wiki.id), 'no hit from the deleted document');

  // Unchanged file again: skipped.
  const again = await post('/v1/collections/corpus/documents', { paths: [corpusPath('xlsx/test.xlsx')] });
  t.equal(again.statusCode, 202);
  const skipped = await jobEnded(again.json().id);
  t.equal(skipped.items[0].stage, 'skipped');
  t.equal(skipped.items[0].note, 'unchanged');

  // A copy in the second allowed folder, then a changed version of it: replaced.
  const copy = path.join(scratch, 'field-notes.html');
  const page = (sentence: string) => `<!doctype html><html><head><title>Field notes</title></head><body><h1>Field notes</h1><p>${sentence}</p></body></html>`;
  fs.writeFileSync(copy, page('The heron colony at Lake Quillmere grew to forty nests this spring.'));
  const first = await jobEnded((await post('/v1/collections/corpus/documents', { paths: [copy] })).json().id);
  t.equal(first.items[0].stage, 'done');
  const docId = first.items[0].document_id as string;
  t.equal((await search('heron colony Quillmere')).results[0]?.document_id, docId);

  fs.writeFileSync(copy, page('The kingfisher burrows along the Quillmere bank were counted in autumn.'));
  const second = await jobEnded((await post('/v1/collections/corpus/documents', { paths: [copy] })).json().id);
  t.equal(second.items[0].stage, 'done', 'changed content is ingested again');
  t.equal(second.items[0].document_id, docId, 'as the same document');
  const doc = (await get(`/v1/collections/corpus/documents/${docId}`)).json();
  t.equal(doc.revision, 2, 'its second revision');
  t.equal(doc.history.filter((h: { action: string }) => h.action === 'ingested').length, 2);
  const kingfisher = await search('kingfisher burrows Quillmere');
  t.equal(kingfisher.results[0]?.document_id, docId, 'the new text is searchable');
  t.notOk((await search('heron colony forty nests')).results.some((h) => h.document_id === docId), 'the old text is gone');
});
