/**
 * The web console end to end in a real headless Chromium (Debian's /usr/bin/chromium driven by
 * playwright-core; never a browser download) against a real server on 127.0.0.1:0 with API keys
 * on and the tiny test models (dense search and the reranker work): open /console, enter the key,
 * create a collection, upload two generated files and watch their progress bars reach 100%, open
 * a document's page markers and chunks, search and open the trace, run an evaluation on a small
 * generated BEIR set (the lexical numbers are checked against the server's own metric functions
 * over the same API answers), delete a document; then a server without models, where only the
 * lexical variant is pre-selected, the others disabled with the server's reason, and rerank is
 * not pre-checked on the Search page; and a folder source added, resynced after a file is deleted
 * on disk and removed in a collection's Sources panel. Every request the page makes
 * goes to the console's files or the public API. Screenshots of each page go to test-results/e2e/.
 * Run with `npm run test:e2e` (after `npm run build`, which builds the console into dist/console).
 */
import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { CONSOLE_DIR } from '../../plugins/console.ts';
import { meanMetrics, queryMetrics } from '../../src/retrieval/eval/metrics.ts';
import { MODELS_FIXTURE_DIR } from '../retrieval/model-fixtures.ts';
import { BEIR_QUERIES, MD_NAME, writeE2eFixtures, type E2eFixtures } from './fixtures/make-e2e-fixtures.ts';

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'e2e-console-key-0123456789';
const SHOTS = path.resolve(import.meta.dirname, '../../test-results/e2e');
/** Long waits (ingestion, an evaluation run) and the default for one element to show up. */
const WAIT = 120_000;
const STEP = 20_000;

if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (see .ci/run)`);
if (!existsSync(path.join(CONSOLE_DIR, 'index.html'))) throw new Error(`${CONSOLE_DIR} has no build: run npm run build first`);

function temp(t: { teardown(fn: () => unknown): void }, prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startServer(tt: { teardown(fn: () => unknown): void }, env: Record<string, string>): Promise<{ app: FastifyInstance; origin: string }> {
  const config = loadConfig({ DATA_DIR: temp(tt, 'e2e-data-'), RATE_LIMIT_RPM: '100000', ...env });
  const app = await buildApp({ config });
  tt.teardown(() => app.close());
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no address');
  return { app, origin: `http://127.0.0.1:${addr.port}` };
}

/** A loopback HTTP server for the URL search (files by name). */
async function serveFiles(tt: { teardown(fn: () => unknown): void }, files: Record<string, Buffer>): Promise<{ origin: string }> {
  const server = createServer((req, res) => {
    const body = files[decodeURIComponent((req.url ?? '/').slice(1))];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/markdown' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  tt.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Calls the public API from the test itself (for cross-checks), with the key. */
async function api<T>(origin: string, method: string, p: string, body?: unknown, key = KEY): Promise<T> {
  const res = await fetch(origin + p, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Every request the page makes must be the console's own files or the public REST API. */
function watchRequests(page: Page, origin: string): string[] {
  const offenders: string[] = [];
  page.on('request', (req) => {
    const u = new URL(req.url());
    if (u.protocol === 'data:') return;
    const ok = u.origin === origin && (u.pathname === '/console' || u.pathname.startsWith('/console/') || u.pathname.startsWith('/v1/') || u.pathname === '/health');
    if (!ok) offenders.push(req.url());
  });
  return offenders;
}

let browser: BrowserContext;
let fx: E2eFixtures;

t.before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  fx = await writeE2eFixtures(temp(t, 'e2e-fixtures-'));
  // A fresh profile folder per run; playwright takes it as the persistent context's user-data-dir.
  browser = await chromium.launchPersistentContext(temp(t, 'e2e-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
t.teardown(() => browser?.close());

t.test('the console with API keys and models: ingest, browse, search with trace, evaluate, delete', async (t) => {
  const { origin } = await startServer(t, { API_KEYS: KEY, MODELS_DIR: MODELS_FIXTURE_DIR });
  // The models load in the background; the documents must be embedded and the reranker ready.
  for (let i = 0; ; i++) {
    const h = await api<{ features: { dense_retrieval: { available: boolean }; reranking: { available: boolean; reason?: string } } }>(origin, 'GET', '/v1/system/health');
    if (h.features.dense_retrieval.available && h.features.reranking.available) break;
    if (i > 600) throw new Error(`models did not load: ${JSON.stringify(h.features)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const page = await browser.newPage();
  t.teardown(() => page.close());
  page.setDefaultTimeout(STEP);
  const offenders = watchRequests(page, origin);
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));

  await t.test('open /console, see the key refused, enter the key', async (t) => {
    const res = await page.goto(`${origin}/console`);
    t.equal(res?.status(), 200);
    t.equal(new URL(page.url()).pathname, '/console/', '/console redirects to /console/');
    await page.waitForSelector('[data-testid="overview-page"]');
    const code = page.locator('[data-testid="error-code"]').first();
    await code.waitFor();
    t.equal(await code.textContent(), 'UNAUTHORIZED', 'without the key the API error shows its code');
    t.match(await page.locator('[data-testid="error-request-id"]').first().textContent(), /\S+/, 'and its request id');
    await page.getByLabel('API key').fill(KEY);
    await page.getByTestId('api-key-save').click();
    await page.getByTestId('api-key-state').filter({ hasText: 'key set' }).waitFor();
    await page.getByTestId('server-status').waitFor();
    t.equal(await page.locator('[data-testid="error-banner"]').count(), 0, 'no error once the key is set');
    t.equal(await page.evaluate(() => Object.values(sessionStorage).includes('e2e-console-key-0123456789')), true, 'the key is kept in sessionStorage');
    await shot(page, '01-overview');
  });

  await t.test('create a collection', async (t) => {
    await page.getByTestId('nav-collections').click();
    await page.getByTestId('collections-page').waitFor();
    await page.getByTestId('collection-name-input').fill('e2e-docs');
    await page.getByTestId('create-collection-button').click();
    const link = page.getByTestId('collection-link').filter({ hasText: 'e2e-docs' });
    await link.waitFor();
    t.ok(await link.isVisible());
    await shot(page, '02-collections');
    await link.click();
    await page.getByTestId('collection-page').waitFor();
  });

  await t.test('upload two files and watch both progress bars reach 100%', async (t) => {
    const seen: number[] = [];
    await page.getByTestId('file-input').setInputFiles([fx.pdf, fx.md]);
    const items = page.getByTestId('ingest-item');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="ingest-item"]').length >= 2, undefined, { timeout: WAIT });
    // Sample the bars until both are full (the values they pass through are recorded, not asserted).
    await page.waitForFunction(
      () => {
        const bars = [...document.querySelectorAll('[data-testid="ingest-item"] [role="progressbar"]')];
        (window as unknown as { __seen: string[] }).__seen = [...((window as unknown as { __seen?: string[] }).__seen ?? []), ...bars.map((b) => b.getAttribute('aria-valuenow') ?? '')];
        return bars.length >= 2 && bars.every((b) => b.getAttribute('aria-valuenow') === '100');
      },
      undefined,
      { polling: 50, timeout: WAIT },
    );
    seen.push(...(await page.evaluate(() => (window as unknown as { __seen: string[] }).__seen.map(Number))));
    t.equal(await items.count(), 2, 'one progress bar per file');
    const stages = await items.evaluateAll((els) => els.map((e) => e.getAttribute('data-stage')));
    t.same(stages, ['done', 'done'], 'both documents ingested');
    t.ok(seen.every((v) => v >= 0 && v <= 100), `bar values stay within 0-100 (${[...new Set(seen)].join(', ')})`);
    await page.getByTestId('refresh-documents').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="document-row"]').length === 2);
    const docs = await api<{ items: { filename: string | null; status: string; chunk_count: number }[] }>(origin, 'GET', '/v1/collections/e2e-docs/documents');
    t.same(docs.items.map((d) => d.status), ['ready', 'ready'], 'the API agrees: two ready documents');
    t.ok(docs.items.every((d) => d.chunk_count > 0));
    await shot(page, '03-collection-ingested');
  });

  await t.test("open a document's page markers and chunks", async (t) => {
    await page.getByTestId('document-row').filter({ hasText: /heron/i }).getByTestId('document-link').click();
    await page.getByTestId('document-page').waitFor();
    await page.getByTestId('document-content').waitFor();
    t.ok((await page.getByTestId('page-marker').count()) >= 2, 'the two-page PDF shows page markers');
    await shot(page, '04-document-content');
    await page.getByTestId('tab-chunks').click();
    await page.getByTestId('chunk-row').first().waitFor();
    const rows = await page.getByTestId('chunk-row').count();
    t.ok(rows >= 1, `${rows} chunks listed`);
    t.match(await page.getByTestId('chunk-row').first().textContent(), /heron/i, 'chunk text shown');
    await shot(page, '05-document-chunks');
  });

  await t.test('search the collection and open the trace', async (t) => {
    await page.getByTestId('nav-search').click();
    await page.getByTestId('search-page').waitFor();
    await page.getByLabel('Collection', { exact: true }).selectOption('e2e-docs');
    await page.getByLabel('Query').fill('foghorn in fog');
    await page.getByLabel('top_k').fill('3');
    await page.getByLabel('Mode').selectOption('hybrid');
    // The page asks the server's health: with a reranker, rerank is pre-checked and enabled.
    await page.waitForFunction(() => (document.querySelector('[data-testid="search-rerank"]') as HTMLInputElement | null)?.checked === true);
    t.equal(await page.getByTestId('search-rerank').isEnabled(), true, 'rerank pre-checked with a reranker');
    await page.getByTestId('search-submit').click();
    const first = page.getByTestId('search-hit').first();
    await first.waitFor();
    t.match(await first.textContent(), /lighthouse/i, 'the lighthouse note answers a foghorn query');
    t.match(await first.textContent(), /Fog signals/, 'the hit shows its heading');
    t.equal(await page.getByTestId('answer-mode').textContent(), 'hybrid');
    await page.getByTestId('trace-toggle').click();
    await page.getByTestId('waterfall').waitFor();
    const stages = await page.locator('[data-testid="waterfall-bar"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-stage')));
    for (const s of ['lexical', 'embed', 'dense', 'fusion', 'rerank']) t.ok(stages.includes(s), `waterfall has ${s}`);
    t.ok(stages.indexOf('lexical') < stages.indexOf('rerank'), 'in pipeline order');
    const rows = page.getByTestId('rank-row');
    t.ok((await rows.count()) >= 1, 'rank-change table has rows');
    const moves = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-movement')));
    t.ok(moves.every((m) => ['up', 'down', 'unchanged', 'new', 'dropped'].includes(m!)), `movements ${moves.join(', ')}`);
    t.match(await page.getByTestId('trace-summary').textContent(), /moved up \d+.*dropped \d+/);
    await page.getByTestId('trace-panel').scrollIntoViewIfNeeded();
    await shot(page, '06-search-trace');
  });

  await t.test('evaluate a generated BEIR set uploaded into a new collection, all four variants', async (t) => {
    await page.getByTestId('nav-evaluate').click();
    await page.getByTestId('evaluate-page').waitFor();
    await page.getByLabel(/corpus\.jsonl/).setInputFiles(fx.beir.corpus);
    await page.getByLabel('queries.jsonl').setInputFiles(fx.beir.queries);
    await page.getByLabel('qrels.tsv').setInputFiles(fx.beir.qrels);
    await page.getByTestId('eval-load').click();
    t.match(await page.getByTestId('eval-set-summary').textContent(), /5 queries, 5 judgements \(documents\), 6 corpus documents/);
    t.ok(await page.getByTestId('eval-target-new').isChecked(), 'a set with a corpus defaults to uploading it');
    await page.getByLabel('New or existing collection name').fill('e2e-eval');
    for (const v of ['lexical', 'dense', 'hybrid', 'hybrid-rerank']) {
      t.equal(await page.getByTestId(`eval-variant-${v}`).isChecked(), true, `${v} pre-selected (the server has the models)`);
      t.equal(await page.getByTestId(`eval-variant-${v}`).isEnabled(), true, `${v} enabled`);
    }
    t.equal(await page.locator('[data-testid^="eval-variant-reason-"]').count(), 0, 'no variant marked unavailable');
    await page.getByTestId('eval-run').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="eval-row"]').length === 4, undefined, { timeout: WAIT });
    t.equal(await page.getByTestId('eval-ingest-progress').locator('[role="progressbar"]').getAttribute('aria-valuenow'), '100', 'corpus upload reached 100%');
    const rows = await page.getByTestId('eval-row').evaluateAll((els) =>
      els.map((e) => ({
        variant: e.getAttribute('data-variant'),
        status: e.getAttribute('data-status'),
        metrics: Object.fromEntries([...e.querySelectorAll('[data-metric]')].map((c) => [c.getAttribute('data-metric'), Number(c.textContent)])),
        text: e.textContent,
      })),
    );
    t.same(rows.map((r) => r.variant), ['lexical', 'dense', 'hybrid', 'hybrid-rerank']);
    t.same(rows.map((r) => r.status), ['ok', 'ok', 'ok', 'ok'], rows.map((r) => r.text).join(' | '));

    // The page's lexical numbers equal the server's metric functions over the same API answers.
    const docs = await api<{ items: { id: string; filename: string | null }[] }>(origin, 'GET', '/v1/collections/e2e-eval/documents?limit=100');
    t.equal(docs.items.length, 6, 'every corpus document ingested');
    const idOf = new Map(docs.items.map((d) => [d.id, (d.filename ?? '').replace(/\.txt$/, '')]));
    const per = [];
    for (const q of BEIR_QUERIES) {
      const r = await api<{ results: { document_id: string }[] }>(origin, 'POST', '/v1/collections/e2e-eval/search', { query: q.text, top_k: 100, mode: 'lexical', rerank: false });
      const ranked = [...new Set(r.results.map((h) => idOf.get(h.document_id)!))];
      per.push(queryMetrics(ranked, new Map([[fx.judgements[q._id]!, 1]])));
    }
    const want = meanMetrics(per);
    const lex = rows[0]!.metrics;
    t.same(
      { ndcg_at_10: lex.ndcg_at_10, recall_at_100: lex.recall_at_100, mrr_at_10: lex.mrr_at_10, hit_at_5: lex.hit_at_k },
      want,
      'lexical metrics as the server computes them',
    );
    t.equal(want.ndcg_at_10, 1, 'each query finds its document first (the set is built so)');
    t.ok((await page.getByTestId('metric-bar').count()) === 16, 'bar chart: 4 metrics x 4 variants');
    await page.getByTestId('metrics-chart').scrollIntoViewIfNeeded();
    await shot(page, '07-evaluate');
  });

  await t.test('the rank-change table agrees with the trace summary (the BEIR collection, every candidate)', async (t) => {
    await page.getByTestId('nav-search').click();
    await page.getByLabel('Collection', { exact: true }).selectOption('e2e-eval');
    await page.getByLabel('Query').fill('comet tail and glacier meltwater');
    await page.getByLabel('top_k').fill('3');
    await page.getByLabel('Mode').selectOption('hybrid');
    await page.getByTestId('search-submit').click();
    await page.getByTestId('search-hit').first().waitFor();
    await page.getByTestId('trace-toggle').click();
    await page.getByTestId('rank-table').waitFor();
    const summary = (await page.getByTestId('trace-summary').textContent()) ?? '';
    const count = (label: string) => Number(new RegExp(`${label} (\\d+)`).exec(summary)?.[1]);
    const moves = await page.getByTestId('rank-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-movement')));
    const n = (m: string) => moves.filter((x) => x === m).length;
    t.same(
      { up: n('up'), down: n('down'), unchanged: n('unchanged'), new: n('new'), dropped: n('dropped') },
      { up: count('moved up'), down: count('moved down'), unchanged: count('unchanged'), new: count('new'), dropped: count('dropped') },
      `table rows match the summary (${summary})`,
    );
    const total = Number(/\((\d+)\)/.exec((await page.getByTestId('trace-all-label').textContent()) ?? '')?.[1]);
    await page.getByTestId('trace-all').check();
    const all = await page.getByTestId('rank-row').count();
    t.ok(all === total && all >= moves.length, `every candidate on request (${moves.length} changed, ${all} in all)`);
    await page.waitForFunction(() => ![...document.querySelectorAll('[data-testid="rank-row"] td:first-child')].some((td) => /doc_[0-9a-f]{8,}/.test(td.textContent ?? '')));
    t.pass('every row names its document (dropped candidates too), not a bare document id');
    await page.getByTestId('trace-panel').scrollIntoViewIfNeeded();
    await shot(page, '08-search-trace-all-candidates');
  });

  await t.test('delete a document', async (t) => {
    await page.goto(`${origin}/console/#/collections/e2e-docs`);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="document-row"]').length === 2);
    const row = page.getByTestId('document-row').filter({ hasText: /lighthouse/i });
    await row.getByTestId('delete-document').click();
    await row.getByTestId('confirm-delete-document').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="document-row"]').length === 1);
    t.notMatch(await page.getByTestId('document-row').first().textContent(), /lighthouse/i, 'the other document is left');
    const docs = await api<{ total: number }>(origin, 'GET', '/v1/collections/e2e-docs/documents');
    t.equal(docs.total, 1, 'the API agrees');
    await shot(page, '09-collection-after-delete');
  });

  t.same(offenders, [], 'the page called only its own files and the public API');
  t.same(pageErrors, [], 'no uncaught errors in the page');
});

t.test('a server without models: only lexical is pre-selected, the other variants are disabled with the reason', async (t) => {
  const files = await serveFiles(t, { [MD_NAME]: await readFile(fx.md) });
  const { origin } = await startServer(t, { MODELS_DIR: temp(t, 'e2e-no-models-'), ALLOW_PRIVATE_NETWORKS: 'true' });
  await api(origin, 'POST', '/v1/collections', { name: 'plain' }, '');
  for (const [name, text] of [
    ['otter.txt', 'River otters hunt crayfish along the riverbank.'],
    ['comet.txt', 'A comet grows an ion tail near the sun.'],
  ]) {
    const form = new FormData();
    form.append('wait_seconds', '60');
    form.append('file', new Blob([text], { type: 'text/plain' }), name);
    const res = await fetch(`${origin}/v1/collections/plain/documents`, { method: 'POST', body: form });
    t.equal(res.status, 202, `uploaded ${name}`);
  }
  const page = await browser.newPage();
  t.teardown(() => page.close());
  page.setDefaultTimeout(STEP);
  const offenders = watchRequests(page, origin);
  await page.goto(`${origin}/console/#/evaluate`);
  await page.getByTestId('evaluate-page').waitFor();
  await page.getByLabel('Format').selectOption('list');
  await page.getByLabel('or paste them').fill(
    JSON.stringify([
      { question: 'otters crayfish', expected: 'otter.txt' },
      { question: 'comet ion tail', expected: 'comet' },
    ]),
  );
  await page.getByTestId('eval-load').click();
  t.match(await page.getByTestId('eval-set-summary').textContent(), /2 queries, 2 judgements \(documents\)/);
  await page.getByLabel('Collection', { exact: true }).selectOption('plain');
  // Once the page has the server's health, the variants the collection cannot serve are disabled.
  await page.waitForFunction(() => (document.querySelector('[data-testid="eval-variant-dense"]') as HTMLInputElement | null)?.disabled === true);
  const variants = await page.locator('[data-testid^="eval-variant-"][type="checkbox"]').evaluateAll((els) =>
    (els as HTMLInputElement[]).map((e) => [e.getAttribute('data-testid'), e.checked, e.disabled]),
  );
  t.same(variants, [
    ['eval-variant-lexical', true, false],
    ['eval-variant-dense', false, true],
    ['eval-variant-hybrid', false, true],
    ['eval-variant-hybrid-rerank', false, true],
  ], 'only lexical pre-selected; the rest disabled');
  t.equal(await page.locator('[data-testid="eval-variant-reason-lexical"]').count(), 0, 'lexical has no reason');
  for (const v of ['dense', 'hybrid', 'hybrid-rerank']) {
    t.match(await page.getByTestId(`eval-variant-reason-${v}`).textContent(), /unavailable: the collection "plain" has no embeddings/, `${v}: the reason is shown`);
  }
  await page.getByTestId('eval-run').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="eval-row"]').length === 1, undefined, { timeout: WAIT });
  const rows = await page.getByTestId('eval-row').evaluateAll((els) => els.map((e) => ({ variant: e.getAttribute('data-variant'), status: e.getAttribute('data-status'), text: e.textContent ?? '' })));
  t.same(rows.map((r) => [r.variant, r.status]), [['lexical', 'ok']], 'only the selected variant ran: no 503s');
  t.equal(await page.locator('[data-testid="eval-row"][data-variant="lexical"] [data-metric="hit_at_k"]').textContent(), '1.0000', 'lexical finds both');
  await shot(page, '10-evaluate-unavailable');

  await page.getByTestId('nav-search').click();
  await page.getByLabel('Collection', { exact: true }).selectOption('plain');
  await page.getByLabel('Query').fill('otters');
  await page.waitForFunction(() => (document.querySelector('[data-testid="search-rerank"]') as HTMLInputElement | null)?.disabled === true);
  t.equal(await page.getByTestId('search-rerank').isChecked(), false, 'rerank is not pre-checked without a reranker');
  t.match(await page.getByTestId('search-rerank-reason').textContent(), /unavailable: reranker .* is unavailable/, 'and says why');
  await page.getByLabel('Mode').selectOption('dense');
  await page.getByTestId('search-submit').click();
  await page.getByTestId('error-code').waitFor();
  t.equal(await page.getByTestId('error-code').textContent(), 'MODEL_UNAVAILABLE', 'a search error shows its code');
  t.match(await page.getByTestId('error-request-id').textContent(), /\S+/, 'and its request id');
  await shot(page, '11-search-error');

  // A document URL instead of a collection, submitted from the keyboard (Enter in the query box).
  await page.getByTestId('target-url').check();
  await page.getByLabel('Document URL', { exact: true }).fill(`${files.origin}/${MD_NAME}`);
  await page.getByLabel('Mode').selectOption('lexical');
  await page.getByLabel('Query').fill('foghorn');
  await page.getByLabel('Query').press('Enter');
  const hit = page.getByTestId('search-hit').first();
  await hit.waitFor();
  t.match(await hit.textContent(), /foghorn/, 'the URL answers');
  t.match(await hit.textContent(), new RegExp(MD_NAME), 'the hit names its document');
  await page.getByTestId('trace-toggle').click();
  const stages = await page.locator('[data-testid="waterfall-bar"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-stage')));
  t.equal(stages[0], 'load', 'a URL search starts with loading the document');
  t.ok(stages.includes('lexical'));
  await shot(page, '12-search-url');
  t.same(offenders, [], 'only the console and the public API');
});

t.test("a folder source in the collection's Sources panel: add (first sync), a file deleted on disk, Sync, Remove", async (t) => {
  const folder = temp(t, 'e2e-source-');
  const { writeFileSync, unlinkSync, realpathSync } = await import('node:fs');
  const notes = { 'heron.md': '# Herons\n\nA grey heron waits motionless in the shallows for fish.', 'kiln.md': '# Kilns\n\nA brick kiln fires clay pots at a thousand degrees.', 'tide.md': '# Tides\n\nSpring tides follow the new and the full moon.' };
  for (const [name, text] of Object.entries(notes)) writeFileSync(path.join(folder, name), text);
  const dir = realpathSync(folder);
  // Watching and the scheduler off: after the first sync only the panel's Sync button syncs.
  const { origin } = await startServer(t, { MODELS_DIR: temp(t, 'e2e-no-models-'), ALLOWED_DIRS: dir, SOURCES_WATCH: 'false', SOURCES_SCHEDULER: 'false' });
  await api(origin, 'POST', '/v1/collections', { name: 'notes' }, '');
  const page = await browser.newPage();
  t.teardown(() => page.close());
  page.setDefaultTimeout(STEP);
  const offenders = watchRequests(page, origin);
  await page.goto(`${origin}/console/#/collections/notes`);
  const panel = page.getByTestId('sources-panel');
  await panel.waitFor();
  t.match(await panel.textContent(), /No sources/, 'an empty panel says what a source is for');

  await page.getByLabel('Kind').selectOption('folder');
  await page.getByLabel('Folder path').fill(dir);
  await panel.getByRole('button', { name: 'Add source' }).click();
  const row = page.getByTestId('source-row');
  await row.filter({ hasText: '3 new' }).waitFor({ timeout: WAIT });
  t.match(await row.textContent(), /folder/);
  t.match(await row.textContent(), new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'the row names the folder');
  t.match(await row.textContent(), /succeeded/, 'the first sync succeeded');
  const docs = await api<{ items: { filename: string | null }[] }>(origin, 'GET', '/v1/collections/notes/documents', undefined, '');
  t.same(docs.items.map((d) => d.filename).sort(), ['heron.md', 'kiln.md', 'tide.md'], 'the API agrees: three documents');
  await shot(page, '13-sources-first-sync');

  unlinkSync(path.join(dir, 'kiln.md'));
  await row.getByRole('button', { name: 'Sync' }).click();
  await row.filter({ hasText: '1 gone' }).waitFor({ timeout: WAIT });
  t.match(await row.textContent(), /0 new, 0 changed, 2 unchanged, 1 gone/, 'the resync deleted the gone file and skipped the rest');
  const after = await api<{ items: { filename: string | null }[] }>(origin, 'GET', '/v1/collections/notes/documents', undefined, '');
  t.same(after.items.map((d) => d.filename).sort(), ['heron.md', 'tide.md'], 'the deleted file left the collection');
  const search = await api<{ results: { text: string }[] }>(origin, 'POST', '/v1/collections/notes/search', { query: 'brick kiln clay', min_confidence: 'none' }, '');
  t.notOk(search.results.some((r) => /kiln/i.test(r.text)), 'and is no longer searchable');
  await shot(page, '14-sources-resync');

  await row.getByRole('button', { name: 'Remove' }).click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="source-row"]').length === 0);
  const sources = await api<{ total: number }>(origin, 'GET', '/v1/collections/notes/sources', undefined, '');
  t.equal(sources.total, 0, 'the API agrees: no sources left');
  t.same(offenders, [], 'only the console and the public API');
});
