/**
 * What a collection gives a user in other languages and for short documents, through the REST
 * API on real files in a folder: chunks are analyzed with their document's language (Snowball
 * stemmers, stop words, trigrams), a query with its own detected language or, when it is too short
 * to tell, the collection's most common one; a short document is one chunk (documents rank against
 * each other whole), and a plain-text file's first line, standing alone, is its title.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import t, { type Test } from 'tap';
import { createServices } from '../../src/services.ts';
import { buildTestApp, tempDir, testConfig } from '../helper.ts';

type Hit = { title: string | null; source: string; heading_path: string[]; text: string };
type SearchAnswer = { results: Hit[]; confidence: string; message: string };

async function ingestFolder(t: Test, files: Record<string, string>) {
  const folder = tempDir(t);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(folder, name), text);
  const config = testConfig(t, { ALLOWED_DIRS: folder });
  const services = createServices(config, { startModels: false, inlineExtraction: true, log: pino({ level: 'silent' }) });
  t.teardown(() => services.close());
  const app = await buildTestApp(t, { config, services });
  const res = await app.inject({ method: 'POST', url: '/v1/collections/docs/documents', payload: { paths: [folder] } });
  t.equal(res.statusCode, 202, res.body);
  const jobId = res.json<{ id: string }>().id;
  // Wait on the job's own end (the knowledge base resolves it when the job ends; no polling interval).
  let job = await services.kb.waitForJob(jobId, 120_000);
  while (job.status === 'queued' || job.status === 'running') job = await services.kb.waitForJob(jobId, 120_000);
  t.equal(job.status, 'succeeded', JSON.stringify(job));
  const search = async (query: string, extra: Record<string, unknown> = {}) => {
    const r = await app.inject({ method: 'POST', url: '/v1/collections/docs/search', payload: { query, top_k: 5, min_confidence: 'none', ...extra } });
    t.equal(r.statusCode, 200, r.body);
    return r.json<SearchAnswer>();
  };
  const chunks = async (file: string) => {
    const docs = (await app.inject('/v1/collections/docs/documents?limit=100')).json<{ items: Array<{ id: string; source: string; title: string | null; chunk_count: number; language: string | null }> }>();
    return docs.items.find((d) => d.source.endsWith(file))!;
  };
  return { search, chunks };
}

const GERMAN = [
  'Die Wasserversorgung der Stadt wurde im neunzehnten Jahrhundert vollständig erneuert. Die alten Brunnen ersetzte man durch ein Netz von Leitungen, das bis heute die Häuser der Altstadt versorgt.',
  'Der Bahnhof liegt am nördlichen Rand der Innenstadt. Täglich fahren dort Züge in alle Richtungen, und die Halle aus Glas und Eisen gilt als eines der schönsten Bauwerke der Region.',
  'Die Universität wurde von einem Fürsten gegründet, der Gelehrte aus ganz Europa an seinen Hof holte. Ihre Bibliothek besitzt heute mehr als zwei Millionen Bücher und zahlreiche Handschriften.',
  'Im Winter frieren die Seen um die Stadt oft zu. Dann laufen die Bewohner Schlittschuh, und auf dem größten See findet jedes Jahr ein Rennen über zwanzig Kilometer statt.',
];

t.test('German documents: an inflected query form meets the stemmed and trigram terms of its document', async (t) => {
  const files: Record<string, string> = {};
  GERMAN.forEach((text, i) => (files[`stadt-${i}.txt`] = `${text}\n`));
  const { search, chunks } = await ingestFolder(t, files);
  t.equal((await chunks('stadt-2.txt')).language, 'de', 'the document language is detected and stored');
  // "Bibliotheken" / "gegründeten" / "Handschrift" never occur as such.
  const res = await search('Welche Bibliotheken besitzt die gegründete Universität an Handschrift?');
  t.ok(res.results[0]!.source.endsWith('stadt-2.txt'), res.results.map((h) => h.source).join(', '));
  // Two words: too short to detect; the collection's language (German) is used.
  const short = await search('Züge Bahnhöfe');
  t.ok(short.results[0]!.source.endsWith('stadt-1.txt'), 'a short query falls back to the collection language');
});

t.test('short documents are one chunk each; a plain-text first line standing alone is the title', async (t) => {
  const long = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} of the maintenance manual describes how the pump housing is checked for wear and cleaned.`).join('\n\n');
  const { search, chunks } = await ingestFolder(t, {
    'abstract.txt': 'Coral reef bleaching under marine heatwaves\n\nWarmer oceans expel the algae that corals live with. We measured bleaching on forty reefs during three heatwaves and found that recovery took longer after each one.\n',
    'note.txt': 'this is just a note. it has two sentences on one line\n\nand a second paragraph below it.\n',
    'manual.txt': `${long}\n`,
  });
  const abstract = await chunks('abstract.txt');
  t.equal(abstract.chunk_count, 1, 'a short document is one chunk');
  t.equal(abstract.title, 'Coral reef bleaching under marine heatwaves', 'the first line is the title');
  t.equal((await chunks('note.txt')).title, null, 'two sentences on the first line are not a title');
  t.ok((await chunks('manual.txt')).chunk_count > 1, 'a longer document is still cut into chunks');
  const res = await search('coral bleaching heatwaves');
  t.equal(res.results[0]!.title, 'Coral reef bleaching under marine heatwaves');
  t.same(res.results[0]!.heading_path, ['Coral reef bleaching under marine heatwaves'], 'the title is the heading of its chunks (a title field for BM25F)');
});
