/**
 * Issue 10 item 7: retrieve_chunks over several documents answers with the documents that could be
 * searched and lists the others in `errors`, instead of failing the whole call; a single document
 * and a call where every document failed still fail as before. Through REST (app.inject) against a
 * loopback static server.
 */
import t from 'tap';
import Value from 'typebox/value';
import { RetrieveResultSchema } from '../../src/retrieval/schemas.ts';
import { buildLocalApp, post, startStaticServer } from '../integration/helpers.ts';

const GOOD_TEXT = [
  '# Maintenance guide',
  '',
  'The peristaltic pump needs its tubing replaced every four hundred operating hours.',
  '',
  '## Calibration',
  '',
  'Calibrate the flow sensor against a graduated cylinder after each tubing change.',
].join('\n');

t.test('multi-document retrieve_chunks: one good document, one 404, one unsupported file', async (t) => {
  const srv = await startStaticServer(t);
  const good = srv.add('guide.md', Buffer.from(GOOD_TEXT), 'text/markdown');
  const missing = `${srv.origin}/mem/missing.pdf`;
  // Bytes no extractor reads (an ELF header), served as an executable.
  const binary = srv.add('tool.bin', Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(256, 7)]), 'application/x-executable');
  const app = await buildLocalApp(t);

  const res = await post(app, '/v1/documents/retrieve', { document_urls: [good, missing, binary], query: 'tubing replaced pump', top_k: 3 });
  t.equal(res.status, 200, String(res.body.error ?? 'answered'));
  t.ok(Value.Check(RetrieveResultSchema, res.body), JSON.stringify([...Value.Errors(RetrieveResultSchema, res.body)][0] ?? null));
  t.ok(res.body.results.length > 0, 'results from the good document');
  t.ok(res.body.results.every((r: { source: string }) => r.source === good), 'every result comes from the good document');
  t.match(res.body.results[0].text, /peristaltic pump/);
  t.equal(res.body.retrieval.documents.length, 1, 'only the good document was searched');
  const errors = res.body.errors as Array<{ source: string; code: string; message: string }>;
  t.equal(errors.length, 2, JSON.stringify(errors));
  const bySource = new Map(errors.map((e) => [e.source, e]));
  t.equal(bySource.get(missing)?.code, 'DOWNLOAD_ERROR', JSON.stringify(bySource.get(missing)));
  t.match(bySource.get(missing)?.message, /404/);
  t.equal(bySource.get(binary)?.code, 'UNSUPPORTED_FORMAT', JSON.stringify(bySource.get(binary)));
  t.ok(errors.every((e) => e.message.length > 0));

  // Every document fine: no errors field at all.
  const ok = await post(app, '/v1/documents/retrieve', { document_urls: [good], query: 'flow sensor calibration' });
  t.equal(ok.status, 200);
  t.notOk('errors' in ok.body, 'no errors list when nothing failed');
});

t.test('a single failing document, and all documents failing, still fail the call', async (t) => {
  const srv = await startStaticServer(t);
  const missing = `${srv.origin}/mem/missing.pdf`;
  const alsoMissing = `${srv.origin}/mem/gone.docx`;
  const binary = srv.add('tool.bin', Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(256, 7)]), 'application/x-executable');
  const app = await buildLocalApp(t);

  const one = await post(app, '/v1/documents/retrieve', { document_url: missing, query: 'pump' });
  t.equal(one.status, 502);
  t.equal(one.body.code, 'DOWNLOAD_ERROR');
  t.notMatch(one.body.error, /All \d+ documents failed/, 'a single document keeps its own error');

  const all = await post(app, '/v1/documents/retrieve', { document_urls: [missing, alsoMissing, binary], query: 'pump' });
  t.equal(all.status, 502, 'the first document\'s code decides the status');
  t.equal(all.body.code, 'DOWNLOAD_ERROR');
  t.match(all.body.error, /All 3 documents failed/);
  t.match(all.body.error, missing);
  t.match(all.body.error, alsoMissing);
  t.match(all.body.error, /UNSUPPORTED_FORMAT/);
});
