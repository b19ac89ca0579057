/**
 * Every OpenAPI example that fetches a public sample URL has an offline twin (`<name>_offline`,
 * after the public ones, so the default stays the first): the same request on the file `npm run
 * demo` serves for it on 127.0.0.1:8090. Sent as Swagger UI would send it to a server started the
 * way the demo starts it (ALLOWED_HOSTS naming the file server), each twin answers 200; to a server
 * started otherwise, 403 URL_NOT_ALLOWED naming ALLOWED_HOSTS. The demo's own file writer and
 * file server serve the files, on a free port standing in for 8090.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { startFileServer } from '../../scripts/demo/file-server.ts';
import { writeDemoFiles } from '../../scripts/demo/sample-files.ts';
import { OPENAPI_FILE } from '../../src/openapi.ts';
import { DEMO_FILES, DEMO_FILES_ORIGIN, DEMO_FILES_PORT, OFFLINE_SUFFIX, SAMPLE_URLS } from '../../src/tools/examples.ts';
import { buildTestApp, tempDir, testConfig } from '../helper.ts';

/* eslint-disable @typescript-eslint/no-explicit-any */
const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
const publicUrls = new Set<string>(Object.values(SAMPLE_URLS));
const demoUrls = new Set<string>(Object.values(DEMO_FILES).map((name) => `${DEMO_FILES_ORIGIN}/${name}`));

interface JsonOperation {
  path: string;
  operationId: string;
  examples: Array<[string, { summary: string; description?: string; value: unknown }]>;
}
const operations: JsonOperation[] = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.values(item).flatMap((op: any) => {
    const examples = Object.entries(op.requestBody?.content?.['application/json']?.examples ?? {}) as JsonOperation['examples'];
    return examples.length ? [{ path, operationId: op.operationId as string, examples }] : [];
  }),
);

/** Every string of a value, deep. */
const strings = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(strings) : v && typeof v === 'object' ? Object.values(v).flatMap(strings) : [];

t.test('each public URL example has its offline twin, after the public ones', async (t) => {
  let twins = 0;
  for (const op of operations) {
    const names = op.examples.map(([n]) => n);
    const firstTwin = names.findIndex((n) => n.endsWith(OFFLINE_SUFFIX));
    if (firstTwin >= 0) t.ok(names.slice(firstTwin).every((n) => n.endsWith(OFFLINE_SUFFIX)), `${op.operationId}: twins come last (${names})`);
    t.notOk(names[0]!.endsWith(OFFLINE_SUFFIX), `${op.operationId}: the default example is the public one`);
    for (const [name, ex] of op.examples) {
      if (name.endsWith(OFFLINE_SUFFIX) || !strings(ex.value).some((s) => publicUrls.has(s))) continue;
      const twin = op.examples.find(([n]) => n === `${name}${OFFLINE_SUFFIX}`)?.[1];
      if (!t.ok(twin, `${op.operationId}/${name} has ${name}${OFFLINE_SUFFIX}`)) continue;
      twins++;
      const localised = JSON.parse(JSON.stringify(ex.value), (_k, v) =>
        typeof v === 'string' && publicUrls.has(v) ? `${DEMO_FILES_ORIGIN}/${DEMO_FILES[(Object.keys(SAMPLE_URLS) as Array<keyof typeof SAMPLE_URLS>).find((k) => SAMPLE_URLS[k] === v)!]}` : v,
      );
      t.same(twin!.value, localised, `${op.operationId}/${name}: the same request on the demo's files`);
      t.ok(strings(twin!.value).filter((s) => s.startsWith('http')).every((s) => demoUrls.has(s)), 'only demo URLs');
      t.match(twin!.description, /npm run demo/, 'says what it needs');
      t.match(twin!.description, `ALLOWED_HOSTS=127.0.0.1:${DEMO_FILES_PORT}`);
    }
  }
  t.ok(twins >= 10, `${twins} offline twins`);
});

t.test('every offline twin answers 200 on a server started as the demo starts it, 403 naming ALLOWED_HOSTS otherwise', async (t) => {
  const dir = tempDir(t, 'rag-demo-files-');
  await writeDemoFiles(dir);
  const files = await startFileServer(dir, 0);
  t.teardown(() => files.close());
  // A free port stands in for 8090: the examples' URLs are rewritten to it, nothing else changes.
  const moved = (v: unknown) => JSON.parse(JSON.stringify(v).split(DEMO_FILES_ORIGIN).join(files.origin)) as object;
  const demoLike = await buildTestApp(t, { config: testConfig(t, { ALLOWED_HOSTS: `127.0.0.1:${files.port}` }) });
  const plain = await buildTestApp(t, { config: testConfig(t) });
  let sent = 0;
  for (const op of operations) {
    for (const [name, ex] of op.examples.filter(([n]) => n.endsWith(OFFLINE_SUFFIX))) {
      const res = await demoLike.inject({ method: 'POST', url: op.path, payload: moved(ex.value) });
      t.equal(res.statusCode, 200, `${op.operationId}/${name}: ${res.body.slice(0, 300)}`);
      const refused = await plain.inject({ method: 'POST', url: op.path, payload: moved(ex.value) });
      t.equal(refused.statusCode, 403, `${op.operationId}/${name} without the demo's ALLOWED_HOSTS`);
      t.match(refused.json().error, `ALLOWED_HOSTS=127.0.0.1:${files.port}`, 'the refusal names the fix');
      sent++;
    }
  }
  t.ok(sent >= 10, `${sent} offline examples sent`);
});

t.test("a server that may fetch the demo's files serves the offline twins first, so Swagger UI's default example works offline", async (t) => {
  const firstNames = (served: any) =>
    Object.entries(served.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.values(item).flatMap((op: any) => {
        const names = Object.keys(op.requestBody?.content?.['application/json']?.examples ?? {});
        return names.length ? [{ path, names }] : [];
      }),
    );
  const demo = await buildTestApp(t, { config: testConfig(t, { ALLOWED_HOSTS: `127.0.0.1:${DEMO_FILES_PORT}` }) });
  const plain = await buildTestApp(t, { config: testConfig(t) });
  const demoDoc = (await demo.inject({ method: 'GET', url: '/openapi.json' })).json();
  const plainDoc = (await plain.inject({ method: 'GET', url: '/openapi.json' })).json();
  let reordered = 0;
  for (const { path, names } of firstNames(demoDoc)) {
    const twins = names.filter((n) => n.endsWith(OFFLINE_SUFFIX));
    if (twins.length === 0) continue;
    reordered++;
    t.same(names.slice(0, twins.length), twins, `${path}: the offline twins come first (${names})`);
    const plainNames = firstNames(plainDoc).find((o) => o.path === path)!.names;
    t.same([...names].sort(), [...plainNames].sort(), `${path}: the same examples, only reordered`);
    t.notOk(plainNames[0]!.endsWith(OFFLINE_SUFFIX), `${path}: a server without the demo's ALLOWED_HOSTS keeps the public default`);
  }
  t.ok(reordered >= 10, `${reordered} operations default to an offline example`);
  t.same(plainDoc.paths, doc.paths, 'the plain server serves the committed document');
});
