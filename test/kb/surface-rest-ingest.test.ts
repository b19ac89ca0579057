/**
 * Ingestion and search over REST on the real app: ingest by URL from a loopback server (202 with
 * the job, the collection created), the job's SSE events over a real socket until it ends, get_job,
 * search (hits, confidence), filters, list_documents paging, delete a document and see it gone
 * from search, cancel an ended job (409), an upload, and bad ingestion input.
 */
import t from 'tap';
import { jobEnded, kbWorld, parseSse } from './surface-fixtures.ts';

t.test('ingest by URL, follow the events, search, filter, page, delete', async (t) => {
  const { app, urls } = await kbWorld(t);
  // The stream as app.inject reads it: the whole body once the server ends it.
  const readSse = async (url: string) => {
    const res = await app.inject(url);
    return { status: res.statusCode, headers: res.headers, body: res.body };
  };

  const accepted = await app.inject({ method: 'POST', url: '/v1/collections/animals/documents', payload: { urls: [urls.otters, urls.volcanoes, urls.bread] } });
  t.equal(accepted.statusCode, 202, accepted.body);
  const job = accepted.json();
  t.equal(job.collection, 'animals');
  t.equal(job.counts.total, 3);
  t.ok(['queued', 'running', 'succeeded'].includes(job.status), job.status);
  t.match(job.hint, /get_job|ended/);
  t.equal((await app.inject('/v1/collections/animals')).statusCode, 200, 'the collection was created');

  // The SSE stream: the state first, then live events, ending after the final job event.
  const sse = await readSse(`/v1/jobs/${job.id}/events`);
  t.equal(sse.status, 200);
  t.match(sse.headers['content-type'], /^text\/event-stream/);
  t.ok(sse.headers['x-request-id'], 'the request id header is kept');
  const events = parseSse(sse.body).filter((e) => e.event !== 'comment');
  t.equal(events[0]!.event, 'state');
  t.equal(events[0]!.data.id, job.id);
  const last = events.at(-1)!;
  t.equal(last.event, 'job', 'the stream ends with the job event');
  t.equal(last.data.job.status, 'succeeded');
  t.same(events.map((e) => Number(e.id)), events.map((_, i) => i + 1), 'ids count up from 1');
  for (const e of events.slice(1)) t.ok(['progress', 'item', 'job'].includes(e.event), `event ${e.event}`);
  t.ok(events.slice(1).every((e) => e.data.job_id === job.id));
  // A stream opened after the job ended: the state, then the final event, then the end.
  const again = parseSse((await readSse(`/v1/jobs/${job.id}/events`)).body);
  t.same(again.map((e) => e.event), ['state', 'job']);
  t.equal(again[0]!.data.status, 'succeeded');
  const unknown = await readSse(`/v1/jobs/nope/events`);
  t.equal(unknown.status, 404);
  t.equal(JSON.parse(unknown.body).code, 'NOT_FOUND', 'JSON error before streaming');

  const got = await app.inject(`/v1/jobs/${job.id}`);
  t.equal(got.statusCode, 200);
  t.equal(got.json().status, 'succeeded');
  t.same(got.json().counts, { total: 3, done: 3, skipped: 0, failed: 0, cancelled: 0 });
  t.ok(got.json().items.every((i: { stage: string; document_id: string | null }) => i.stage === 'done' && i.document_id));

  // Search: hits with their document, confidence.
  const search = await app.inject({ method: 'POST', url: '/v1/collections/animals/search', payload: { query: 'otters holding hands while sleeping', top_k: 3 } });
  t.equal(search.statusCode, 200, search.body);
  const s = search.json();
  t.equal(s.collection, 'animals');
  t.ok(s.results.length > 0);
  t.equal(s.results[0].source, urls.otters);
  t.match(s.results[0].text, /hold hands/);
  t.ok(['high', 'medium', 'low'].includes(s.confidence), s.confidence);
  t.type(s.message, 'string');
  const nothing = (await app.inject({ method: 'POST', url: '/v1/collections/animals/search', payload: { query: 'quantum chromodynamics gluon' } })).json();
  t.equal(nothing.confidence, 'none');
  t.equal(nothing.results.length, 0, 'nothing relevant: no noise');

  // Documents: paging.
  const page1 = (await app.inject('/v1/collections/animals/documents?limit=2')).json();
  t.equal(page1.total, 3);
  t.equal(page1.items.length, 2);
  t.equal(page1.next_offset, 2);
  const page2 = (await app.inject(`/v1/collections/animals/documents?limit=2&offset=${page1.next_offset}`)).json();
  t.equal(page2.items.length, 1);
  t.equal(page2.next_offset, null);
  const all = [...page1.items, ...page2.items];
  t.same(all.map((d: { source: string }) => d.source).sort(), Object.values(urls).sort());
  t.ok(all.every((d: { status: string }) => d.status === 'ready'));
  const badLimit = await app.inject('/v1/collections/animals/documents?limit=0');
  t.equal(badLimit.statusCode, 400);
  t.match(badLimit.json().error, /querystring\/limit/);
  const ready = (await app.inject('/v1/collections/animals/documents?status=ready&limit=10')).json();
  t.equal(ready.total, 3, 'status filter, querystring coerced');

  // Filters: only the volcano document.
  const volcano = all.find((d: { source: string }) => d.source === urls.volcanoes);
  const filtered = (await app.inject({
    method: 'POST',
    url: '/v1/collections/animals/search',
    payload: { query: 'otters lava bread', filters: { document_ids: [volcano.id] }, top_k: 5 },
  })).json();
  t.ok(filtered.results.length > 0);
  t.ok(filtered.results.every((h: { document_id: string }) => h.document_id === volcano.id), 'only the filtered document');
  t.type(filtered.filtered_chunks, 'number');
  const byPrefix = (await app.inject({
    method: 'POST',
    url: '/v1/collections/animals/search',
    payload: { query: 'sourdough', filters: { source_prefix: urls.bread } },
  })).json();
  t.ok(byPrefix.results.every((h: { source: string }) => h.source === urls.bread));
  const withContext = (await app.inject({
    method: 'POST',
    url: '/v1/collections/animals/search',
    payload: { query: 'caldera magma chamber', context: 'neighbors', top_k: 1 },
  })).json();
  t.equal(withContext.results[0].context?.kind, 'neighbors');

  // get_document with history, chunks.
  const otters = all.find((d: { source: string }) => d.source === urls.otters);
  const doc = (await app.inject(`/v1/collections/animals/documents/${otters.id}`)).json();
  t.equal(doc.id, otters.id);
  t.ok(doc.history.length >= 1);
  const chunks = (await app.inject(`/v1/collections/animals/documents/${otters.id}/chunks?limit=1`)).json();
  t.equal(chunks.items.length, 1);
  t.equal(chunks.total, otters.chunk_count);

  // Delete a document: gone from search.
  const del = await app.inject({ method: 'DELETE', url: `/v1/collections/animals/documents/${otters.id}` });
  t.equal(del.statusCode, 200, del.body);
  t.equal(del.json().document_id, otters.id);
  t.equal(del.json().chunks, otters.chunk_count);
  const after = (await app.inject({ method: 'POST', url: '/v1/collections/animals/search', payload: { query: 'otters holding hands while sleeping' } })).json();
  t.notOk(after.results.some((h: { document_id: string }) => h.document_id === otters.id), 'the deleted document is gone from search');
  t.equal((await app.inject(`/v1/collections/animals/documents/${otters.id}`)).statusCode, 404);
  t.equal((await app.inject('/v1/collections/animals/documents')).json().total, 2);

  // Cancel an ended job: 409.
  const cancel = await app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/cancel` });
  t.equal(cancel.statusCode, 409);
  t.equal(cancel.json().code, 'CONFLICT');
  const jobs = (await app.inject('/v1/jobs?collection=animals&status=succeeded')).json();
  t.ok(jobs.items.some((j: { id: string }) => j.id === job.id));

  // Re-ingest: a new job, 202.
  const re = await app.inject({ method: 'POST', url: `/v1/collections/animals/documents/${volcano.id}/reingest` });
  t.equal(re.statusCode, 202, re.body);
  t.equal((await jobEnded(app, re.json().id)).status, 'succeeded');
});

t.test('ingest an upload (multipart), wait_seconds over REST, bad input', async (t) => {
  const { app } = await kbWorld(t);
  const boundary = 'surfaceboundary';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="wait_seconds"\r\n\r\n30\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="kelp.txt"\r\nContent-Type: text/plain\r\n\r\n` +
      'Giant kelp forests shelter fish, seals and urchins along rocky coasts.\r\n' +
      `--${boundary}--\r\n`,
  );
  const up = await app.inject({ method: 'POST', url: '/v1/collections/uploads/documents', payload: body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
  t.equal(up.statusCode, 202, up.body);
  t.equal(up.json().status, 'succeeded', 'waited for the job to end');
  t.equal(up.json().items[0].source_kind, 'upload');
  const hit = (await app.inject({ method: 'POST', url: '/v1/collections/uploads/search', payload: { query: 'giant kelp forests' } })).json();
  t.match(hit.results[0].text, /kelp/);

  const none = await app.inject({ method: 'POST', url: '/v1/collections/uploads/documents', payload: {} });
  t.equal(none.statusCode, 400);
  t.equal(none.json().code, 'VALIDATION_ERROR');
  const badUrl = await app.inject({ method: 'POST', url: '/v1/collections/uploads/documents', payload: { urls: ['ftp://x.org/a'] } });
  t.equal(badUrl.statusCode, 400);
  const badName = await app.inject({ method: 'POST', url: '/v1/collections/UP/documents', payload: { urls: ['https://x.org/a'] } });
  t.equal(badName.statusCode, 400);
  t.match(badName.json().error, /params\/name/);
  const tooLong = await app.inject({ method: 'POST', url: '/v1/collections/uploads/documents', payload: { urls: ['https://x.org/a'], wait_seconds: 121 } });
  t.equal(tooLong.statusCode, 400);
});
