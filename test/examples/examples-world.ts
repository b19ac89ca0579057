/**
 * What the example tests share: the real server listening on 127.0.0.1 with API keys on, a
 * temporary folder it may read (ALLOWED_DIRS) holding three small generated documents whose
 * words are known (a two-section markdown note, a plain-text note and a three-page PDF, so
 * answers can cite pages), and the same folder served over loopback HTTP for document URLs.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, tempDir, type Teardown } from '../helper.ts';
import { listenLoopback } from '../kb/surface-fixtures.ts';
import { startStaticServer } from '../integration/helpers.ts';
import { makeMinimalPdf } from '../fixtures-gen/minimal-pdf.ts';

export const API_KEY = 'example-test-key';

/**
 * Filler lines that share no word with the questions the tests ask, so each page and section is
 * long enough to be a chunk of its own (a collection chunks PDFs at about 1,500 characters, and keeps a document of up to 2,000 whole).
 */
const filler = (topic: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => `${topic} log entry ${from + i}: the duty officer walked the route and noted nothing unusual today.`);

export const HARBOUR_PDF = {
  file: 'harbour.pdf',
  title: 'Harbour Operations Manual',
  pages: [
    ['Harbour inspection notes', 'The north pier was inspected on a calm morning.', 'Two bollards need new paint before winter.', ...filler('Pier', 1, 30)],
    // The answer sits mid-page, so the chunk holding it starts and ends on page 2.
    ['Crane maintenance', ...filler('Yard', 1, 16), 'Crane seven received a new hydraulic hose after the pressure test failed.', ...filler('Yard', 17, 16)],
    ['Tide schedule', ...filler('Quay', 1, 16), 'Spring tides reach the upper quay twice a month.', 'Ferries wait at the outer mooring during the lowest tides.', ...filler('Quay', 17, 16)],
  ],
};

export const OTTERS_MD = {
  file: 'otters.md',
  text:
    '# Sea otters\n\n' +
    '## Sleeping\n\n' +
    'Sea otters hold hands while sleeping so they do not drift apart on the current.\n' +
    'A group of resting otters floating together is called a raft.\n' +
    filler('Kelp', 1, 16).join('\n') +
    '\n\n## Feeding\n\n' +
    'Otters use stones as tools to crack open shellfish and sea urchins.\n' +
    'They eat about a quarter of their body weight every day.\n' +
    filler('Reef', 1, 16).join('\n') +
    '\n',
};

export const BREAD_TXT = {
  file: 'bread.txt',
  text:
    'Sourdough bread rises with wild yeast and lactic acid bacteria.\n\n' +
    'Kneading develops gluten strands that trap the carbon dioxide.\n\n' +
    'A hot oven with steam gives the loaf a crisp, blistered crust.\n',
};

export interface ExamplesWorld {
  app: FastifyInstance;
  /** http://127.0.0.1:PORT of the listening server. */
  server: string;
  /** The folder with the three documents (inside ALLOWED_DIRS). */
  folder: string;
  /** Loopback URL of one of the documents, by file name. */
  url(file: string): string;
}

export async function examplesWorld(t: Teardown): Promise<ExamplesWorld> {
  const folder = tempDir(t, 'rag-examples-docs-');
  writeFileSync(path.join(folder, HARBOUR_PDF.file), makeMinimalPdf({ title: HARBOUR_PDF.title, author: 'Harbour Office', pages: HARBOUR_PDF.pages }));
  writeFileSync(path.join(folder, OTTERS_MD.file), OTTERS_MD.text);
  writeFileSync(path.join(folder, BREAD_TXT.file), BREAD_TXT.text);
  const app = await buildTestApp(t, {
    // ALLOW_PRIVATE_NETWORKS: retrieve_chunks fetches the documents from the loopback file server.
    env: { ALLOWED_DIRS: folder, API_KEYS: API_KEY, ALLOW_PRIVATE_NETWORKS: 'true' },
  });
  const server = await listenLoopback(app);
  const files = await startStaticServer(t, folder);
  return { app, server, folder, url: (file) => files.url(file) };
}

/** Ingests the world's folder into `name` over HTTP, waiting for the job; fails unless all three succeed. */
export async function ingestFolder(world: ExamplesWorld, name: string): Promise<void> {
  const res = await fetch(`${world.server}/v1/collections/${name}/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ paths: [world.folder], wait_seconds: 120 }),
  });
  const body = await res.text();
  const job = JSON.parse(body) as { status?: string; counts?: { done: number } };
  if (res.status !== 202 || job.status !== 'succeeded' || job.counts?.done !== 3) throw new Error(`ingest into ${name}: ${res.status} ${body}`);
}
