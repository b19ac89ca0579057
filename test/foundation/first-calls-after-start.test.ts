/**
 * A server is ready when /health says so, not when everything it could load is loaded: the
 * language model, Swagger UI, the console's static files and the extractors load after the port
 * opens or on first use (src/language/eld-model.ts, plugins/lazy-mount.ts, the format registry).
 * The first calls made right after /health answers 200 must therefore answer exactly as later ones
 * do: detect_language, process_document on an upload (a lazily imported extractor) and on a
 * legacy-charset file (iconv-lite, kept out of the bundle), /docs and /console. Checked on the
 * compiled server (spawned from the bin, what `npm start` runs) and in process through inject.
 *
 * test-process: own (scripts/test-groups.mjs): it asserts what the process has not loaded yet.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { languageModelLoaded } from '../../src/language/eld-model.ts';
import { makeShiftJisCsv } from '../fixtures-gen/documents.ts';
import { makeSampleDocx } from '../fixtures-gen/make-office-fixtures.ts';
import { buildTestApp, spawnCliServer } from '../helper.ts';
import { pollUntil } from '../poll.ts';

const GERMAN = 'Der schnelle braune Fuchs springt über den faulen Hund, und alle Leute im Dorf schauen ihm dabei zu.';
const FRENCH = 'Le renard brun rapide saute par-dessus le chien paresseux pendant que tout le village le regarde.';

t.test('in process: building the app loads no language model; the first detection does, with the right answer', async (t) => {
  const app = await buildTestApp(t);
  t.equal(languageModelLoaded(), false, 'the start left the model unloaded');
  const res = await app.inject({ method: 'POST', url: '/v1/language/detect', payload: { text: GERMAN } });
  t.equal(res.statusCode, 200);
  t.equal(res.json().language_code, 'de');
  t.equal(languageModelLoaded(), true);
  const fr = await app.inject({ method: 'POST', url: '/v1/language/detect', payload: { text: FRENCH } });
  t.equal(fr.json().language_code, 'fr');
});

t.test('compiled server: the calls made right after the first /health 200 all answer', async (t) => {
  const { address: base } = await spawnCliServer(t, { RATE_LIMIT_RPM: '0' });
  let health: Response | undefined;
  await pollUntil(async () => {
    health = await fetch(`${base}/health`).catch(() => undefined);
    return health?.status === 200;
  }, '/health 200');
  t.equal(((await health!.json()) as { ready: boolean }).ready, true);

  const upload = (bytes: Buffer, name: string) => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(bytes)]), name);
    return fetch(`${base}/v1/documents/process`, { method: 'POST', body: form });
  };
  // All at once, as a client that waited for readiness would send them.
  const [detect, text, docx, sjis, docs, consolePage] = await Promise.all([
    fetch(`${base}/v1/language/detect`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: GERMAN }) }),
    upload(Buffer.from(`${FRENCH}\n${FRENCH}\n`), 'renard.txt'),
    upload(await makeSampleDocx(), 'sample.docx'),
    upload(makeShiftJisCsv(), 'cities.csv'),
    fetch(`${base}/docs/`),
    fetch(`${base}/console/`),
  ]);

  t.equal(detect.status, 200);
  t.equal(((await detect.json()) as { language_code: string }).language_code, 'de', 'detect_language');

  t.equal(text.status, 200);
  const textBody = (await text.json()) as { content: string; detected_language: string };
  t.match(textBody.content, 'renard brun');
  t.equal(textBody.detected_language, 'fr', 'process_document detects the language too');

  t.equal(docx.status, 200, 'a DOCX, whose extractor is imported on first use');
  t.ok(((await docx.json()) as { content: string }).content.trim().length > 20, 'DOCX content');

  t.equal(sjis.status, 200, 'a Shift-JIS CSV (iconv-lite from node_modules)');
  t.match(((await sjis.json()) as { content: string }).content, '東京');

  t.equal(docs.status, 200, 'Swagger UI, set up on its first request');
  t.match(docs.headers.get('content-type'), /text\/html/);
  t.match(await docs.text(), /swagger/i);
  const bundle = await fetch(`${base}/docs/static/swagger-ui-bundle.js`);
  t.equal(bundle.status, 200);
  t.ok((await bundle.arrayBuffer()).byteLength > 100_000, "Swagger UI's bundle");
  const missing = await fetch(`${base}/docs/static/no-such-file.js`);
  t.equal(missing.status, 404);
  t.equal(((await missing.json()) as { code: string }).code, 'NOT_FOUND', 'a missing asset is the coded 404');

  // The console is served when built (npm run build), 503 saying how otherwise.
  const built = (() => {
    try {
      return readFileSync(new URL('../../dist/console/index.html', import.meta.url)).length > 0;
    } catch {
      return false;
    }
  })();
  t.equal(consolePage.status, built ? 200 : 503, '/console/');
  if (built) t.match(await consolePage.text(), /<div id="app"><\/div>/);
});
