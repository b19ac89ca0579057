/**
 * Request latency before and after the engine changes, in one run: retrieve_chunks cold and warm,
 * and search_collection on a collection of ~100k chunks, asked of the server of a base revision
 * and the server of this working tree, each in its own process with its own DATA_DIR, in
 * alternating order (so both see the same machine state). Printed side by side with ratios (this
 * tree over the base); above 1.10 fails the check (the issue allows 10%).
 *
 *   cold    retrieve_chunks on a document neither server has seen (download, extract, chunk, index, search)
 *   warm    another question on a document just indexed (its index in memory)
 *   search  search_collection (lexical, top 10) on the ~100k-chunk collection, its index open
 *
 * The base is checked out with `git worktree add --detach /tmp/wt-<commit> <commit>` (this
 * checkout's node_modules linked in) and removed again unless it was there before. Its default is
 * the parent of the first commit of src/kb/search-answer.ts, the tree before the engine changes.
 * Texts are generated (kb-scale-corpus.ts, seeded), so no corpus is needed.
 *
 *   npm run bench -- retrieve-latency [--base <rev>] [--chunks N] [--rounds N]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { QUICK, ROOT, SectionBuilder, isMain, log, round, runStandalone, startChildServer, summarize, type ChildServer } from './harness.ts';
import { sciFactLike } from './kb-scale-corpus.ts';
import type { Section } from './report.ts';
import { postJson, startFileServer } from './servers.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

/** The revision before the engine changes: the parent of the first commit that touched src/kb/search-answer.ts. */
function defaultBase(): string {
  const first = git(['log', '--format=%H', '--', 'src/kb/search-answer.ts']).split('\n').filter(Boolean).at(-1);
  if (!first) throw new Error('no commit touches src/kb/search-answer.ts: give --base <rev>');
  return `${first}~1`;
}

/** A worktree of the base revision at /tmp/wt-<commit>; `remove` takes it away again when this run made it. */
function worktreeOf(rev: string): { dir: string; commit: string; remove: () => void } {
  const commit = git(['rev-parse', rev]);
  const dir = path.join(os.tmpdir(), `wt-${commit.slice(0, 12)}`);
  const existed = fs.existsSync(dir);
  if (!existed) git(['worktree', 'add', '--detach', dir, commit]);
  const modules = path.join(dir, 'node_modules');
  if (!fs.existsSync(modules)) fs.symlinkSync(path.join(ROOT, 'node_modules'), modules);
  return {
    dir,
    commit,
    remove: () => {
      if (!existed) git(['worktree', 'remove', '--force', dir]);
    },
  };
}

/** A Markdown document of `sections` headed sections of generated sentences. */
function markdown(title: string, sections: number, next: () => string): string {
  const parts = [`# ${title}`];
  for (let s = 0; s < sections; s++) {
    parts.push(`## Section ${s + 1}`, Array.from({ length: 6 }, next).join(' '), Array.from({ length: 6 }, next).join(' '));
  }
  return parts.join('\n\n') + '\n';
}

interface Variant {
  label: 'base' | 'now';
  server: ChildServer<{ base: string }>;
}

/** What the benchmark reads of an answer: a job's id and status. */
interface Answer {
  id?: string;
  status?: string;
}

async function call(v: Variant, p: string, body: unknown): Promise<{ ms: number; body: Answer }> {
  const t0 = performance.now();
  const { status, body: out } = await postJson<Answer>(`${v.server.info.base}${p}`, body);
  const ms = performance.now() - t0;
  if (status !== 200 && status !== 201 && status !== 202) throw new Error(`${v.label}: POST ${p} answered ${status}: ${JSON.stringify(out).slice(0, 300)}`);
  return { ms, body: out };
}

async function jobEnded(v: Variant, id: string): Promise<Answer> {
  for (;;) {
    const job = (await (await fetch(`${v.server.info.base}/v1/jobs/${id}`)).json()) as Answer;
    if (['succeeded', 'partial', 'failed', 'cancelled'].includes(job.status ?? '')) return job;
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function chunksOf(v: Variant, name: string): Promise<number> {
  const c = (await (await fetch(`${v.server.info.base}/v1/collections/${name}`)).json()) as { stats: { chunks: number } };
  return c.stats.chunks;
}

/** Ingests the folder into a new collection on both servers (one after the other: each uses every core). */
async function fillCollection(variants: Variant[], name: string, folder: string): Promise<Record<string, { chunks: number; s: number }>> {
  const out: Record<string, { chunks: number; s: number }> = {};
  for (const v of variants) {
    await call(v, '/v1/collections', { name });
    const t0 = performance.now();
    const job = await call(v, `/v1/collections/${name}/documents`, { paths: [folder] });
    const ended = await jobEnded(v, job.body.id!);
    if (ended.status !== 'succeeded') throw new Error(`${v.label}: ingesting the collection ended ${ended.status}`);
    out[v.label] = { chunks: await chunksOf(v, name), s: (performance.now() - t0) / 1000 };
  }
  return out;
}

export async function run(): Promise<Section> {
  const targetChunks = Number(arg('chunks', QUICK ? '10000' : '100000'));
  // 30 rounds: with 10, a cold call's median moved by 30% between two runs of the same trees on an idle machine.
  const rounds = Number(arg('rounds', QUICK ? '3' : '30'));
  const base = worktreeOf(arg('base', defaultBase()));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-bench-latency-'));
  const sb = new SectionBuilder('retrieve-latency', 'Request latency before and after the engine changes', { base: base.commit.slice(0, 12), rounds, chunks: targetChunks });
  const table = sb.table('median ms (base -> this tree)', ['request', 'base', 'now', 'ratio', 'base p95', 'now p95']);
  const gen = sciFactLike(20261204);
  const variants: Variant[] = [];
  let fileServer: Awaited<ReturnType<typeof startFileServer>> | null = null;
  try {
    // Documents for retrieve_chunks, one per round (and one to warm up): ~120 chunks each.
    const docs: string[] = [];
    for (let d = 0; d <= rounds; d++) {
      const file = path.join(work, `doc-${d}.md`);
      fs.writeFileSync(file, markdown(`Bench document ${d}`, 60, gen.next));
      docs.push(file);
    }
    fileServer = await startFileServer(docs);
    // The collection's folder: files of 500 sections, about 930 chunks a file (measured).
    const folder = path.join(work, 'collection');
    fs.mkdirSync(folder);
    const files = Math.max(1, Math.ceil(targetChunks / 900));
    for (let f = 0; f < files; f++) fs.writeFileSync(path.join(folder, `part-${f}.md`), markdown(`Collection part ${f}`, 500, gen.next));
    const opts = (dir: string) => JSON.stringify({ modelsDir: null, env: { ALLOWED_DIRS: work, DATA_DIR: path.join(work, `data-${path.basename(dir)}`) } });
    variants.push({ label: 'base', server: await startChildServer<{ base: string }>(path.join(base.dir, 'scripts', 'bench', 'serve-app.ts'), [opts(base.dir)], { nodeArgs: ['--max-old-space-size=4096'] }) });
    variants.push({ label: 'now', server: await startChildServer<{ base: string }>(path.join(ROOT, 'scripts', 'bench', 'serve-app.ts'), [opts(ROOT)], { nodeArgs: ['--max-old-space-size=4096'] }) });

    const queries = Array.from({ length: 24 }, gen.query);
    const cold: Record<string, number[]> = { base: [], now: [] };
    const warm: Record<string, number[]> = { base: [], now: [] };
    const retrieve = (v: Variant, url: string, q: string) => call(v, '/v1/documents/retrieve', { document_url: url, query: q, top_k: 5, mode: 'lexical' });
    // One throwaway document each: module loading and JIT warm-up are not the engine's.
    for (const v of variants) await retrieve(v, fileServer.url(docs[0]), queries[0]);
    for (let r = 1; r < docs.length; r++) {
      const order = r % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) {
        const url = fileServer.url(docs[r]);
        cold[v.label].push((await retrieve(v, url, queries[r % queries.length])).ms);
        for (let q = 1; q <= 5; q++) warm[v.label].push((await retrieve(v, url, queries[(r + q) % queries.length])).ms);
      }
    }

    log(`ingesting ~${targetChunks} chunks (${files} files) into each server ...`);
    const filled = await fillCollection(variants, 'latency', folder);
    for (const v of variants) log(`${v.label}: ${filled[v.label].chunks} chunks in ${round(filled[v.label].s)} s`);
    const search: Record<string, number[]> = { base: [], now: [] };
    for (const v of variants) await call(v, '/v1/collections/latency/search', { query: queries[0], top_k: 10, mode: 'lexical' });
    for (let r = 0; r < rounds * 5; r++) {
      const order = r % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) search[v.label].push((await call(v, '/v1/collections/latency/search', { query: queries[r % queries.length], top_k: 10, mode: 'lexical' })).ms);
    }

    const rows: Array<[string, Record<string, number[]>]> = [
      ['retrieve_chunks cold (~120-chunk document)', cold],
      ['retrieve_chunks warm', warm],
      [`search_collection, ${filled.now.chunks.toLocaleString('en-US')} chunks (base ${filled.base.chunks.toLocaleString('en-US')})`, search],
    ];
    for (const [label, xs] of rows) {
      const b = summarize(xs.base);
      const n = summarize(xs.now);
      const ratio = n.median_ms / b.median_ms;
      table.rows.push([label, round(b.median_ms), round(n.median_ms), round(ratio), round(b.p95_ms), round(n.p95_ms)]);
      log(`${label}: ${round(b.median_ms)} -> ${round(n.median_ms)} ms (${round(ratio)}x)`);
      // Sub-millisecond answers vary by more than 10% from scheduling alone: 0.5 ms of slack.
      sb.check(`${label} within 10%`, n.median_ms <= b.median_ms * 1.1 + 0.5, `${round(ratio)}x`);
    }
  } finally {
    for (const v of variants) await v.server.stop().catch(() => undefined);
    await fileServer?.close();
    fs.rmSync(work, { recursive: true, force: true });
    base.remove();
  }
  sb.note('Ratio: this tree over the base revision, medians of the same calls in alternating order; each server in its own process, lexical mode (no models).');
  return sb.finish();
}

if (isMain(import.meta.url)) await runStandalone(run);
