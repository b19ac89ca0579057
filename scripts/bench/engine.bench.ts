/**
 * retrieve_chunks before and after a change of the retrieval engine, in one run: the server of a
 * base revision (extracted with `git archive` into a temporary folder, this checkout's
 * node_modules linked in) and the server of this working tree, each in its own process with its
 * own DATA_DIR, asked the same questions in alternating order (so both see the same machine state).
 *
 *   cold  a document neither server has seen (download, extract, chunk, index, search)
 *   warm  another question on a document just indexed (the index in memory)
 *
 * lexical (no models) and, when the bench models are there (npm run bench:models), hybrid + rerank, on a
 * small (~20 abstracts) and a large (~600 abstracts) Markdown document. The ratio is this tree's
 * median over the base's: above 1.10 fails the check (the issue allows 10%).
 *
 *   npm run bench -- engine [--base <rev>] [--rounds N]     (base default HEAD: the last commit)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { abstracts } from './inputs.ts';
import { BENCH_MODELS_DIR, QUICK, ROOT, SectionBuilder, isMain, log, round, runStandalone, startChildServer, summarize, type ChildServer } from './harness.ts';
import type { Section } from './report.ts';
import { postJson, startFileServer } from './servers.ts';

/** The bench models (npm run bench:models); the tiny test models read no real text. */
const MODELS = BENCH_MODELS_DIR;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

/** The base revision's tree in a temporary folder, with this checkout's node_modules. */
function checkoutBase(rev: string): { dir: string; commit: string } {
  const commit = execFileSync('git', ['rev-parse', rev], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-bench-base-'));
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C '${dir}'`], { cwd: ROOT });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return { dir, commit };
}

/** Markdown documents of `size` abstracts each, none sharing text with another (a fresh index each). */
function writeDocuments(dir: string, count: number, size: number, offset: number): string[] {
  const all = abstracts();
  const files: string[] = [];
  for (let d = 0; d < count; d++) {
    const parts: string[] = [`# Bench document ${offset + d}`];
    for (let i = 0; i < size; i++) {
      const a = all[(offset + d * size + i) % all.length];
      parts.push(`## ${a.title}`, a.text);
    }
    const file = path.join(dir, `doc-${size}-${offset + d}.md`);
    fs.writeFileSync(file, parts.join('\n\n') + '\n');
    files.push(file);
  }
  return files;
}

interface Variant {
  label: string;
  server: ChildServer<{ base: string }>;
}

async function retrieve(v: Variant, url: string, query: string): Promise<number> {
  const t0 = performance.now();
  const { status, body } = await postJson(`${v.server.info.base}/v1/documents/retrieve`, { document_url: url, query, top_k: 5 });
  const ms = performance.now() - t0;
  if (status !== 200) throw new Error(`${v.label}: retrieve_chunks answered ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  return ms;
}

export async function run(): Promise<Section> {
  const rev = arg('base', 'HEAD');
  const rounds = Number(arg('rounds', QUICK ? '3' : '12'));
  const base = checkoutBase(rev);
  const docsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-bench-engine-docs-'));
  const sb = new SectionBuilder('engine', 'retrieve_chunks before and after an engine change', { base: base.commit.slice(0, 12), rounds });
  const all = abstracts();
  const queries = Array.from({ length: 6 }, (_, i) => all[(i * 97 + 13) % 600].title);
  const table = sb.table('retrieve_chunks median ms (base -> this tree)', ['mode', 'document', 'cold base', 'cold now', 'cold ratio', 'warm base', 'warm now', 'warm ratio']);
  try {
    const modes: Array<[string, string | null]> = [['lexical', null]];
    if (fs.existsSync(MODELS) && fs.readdirSync(MODELS).length > 0) modes.push(['hybrid + rerank', MODELS]);
    else sb.note('hybrid + rerank not measured: no bench models (npm run bench:models).');
    for (const [mode, modelsDir] of modes) {
      for (const size of [20, 600]) {
        const files = writeDocuments(docsDir, rounds * 2, size, size === 20 ? 0 : 3000);
        const fileServer = await startFileServer(files);
        const opts = JSON.stringify({ modelsDir });
        const variants: Variant[] = [
          { label: 'base', server: await startChildServer<{ base: string }>(path.join(base.dir, 'scripts', 'bench', 'serve-app.ts'), [opts]) },
          { label: 'now', server: await startChildServer<{ base: string }>(path.join(ROOT, 'scripts', 'bench', 'serve-app.ts'), [opts]) },
        ];
        const cold: Record<string, number[]> = { base: [], now: [] };
        const warm: Record<string, number[]> = { base: [], now: [] };
        try {
          // One throwaway document each: module loading and JIT warm-up are not the engine's.
          for (const v of variants) await retrieve(v, fileServer.url(files[0]), queries[0]);
          for (let r = 1; r < files.length; r++) {
            const order = r % 2 === 0 ? variants : [...variants].reverse();
            for (const v of order) {
              const url = fileServer.url(files[r]);
              cold[v.label].push(await retrieve(v, url, queries[r % queries.length]));
              for (let q = 1; q <= 5; q++) warm[v.label].push(await retrieve(v, url, queries[(r + q) % queries.length]));
            }
          }
        } finally {
          for (const v of variants) await v.server.stop();
          await fileServer.close();
        }
        const med = (xs: number[]) => summarize(xs).median_ms;
        const row = {
          coldBase: med(cold.base),
          coldNow: med(cold.now),
          warmBase: med(warm.base),
          warmNow: med(warm.now),
        };
        const coldRatio = row.coldNow / row.coldBase;
        const warmRatio = row.warmNow / row.warmBase;
        table.rows.push([mode, `${size} abstracts`, round(row.coldBase), round(row.coldNow), round(coldRatio), round(row.warmBase), round(row.warmNow), round(warmRatio)]);
        log(`${mode}, ${size} abstracts: cold ${round(row.coldBase)} -> ${round(row.coldNow)} ms (${round(coldRatio)}), warm ${round(row.warmBase)} -> ${round(row.warmNow)} ms (${round(warmRatio)})`);
        // Sub-millisecond warm answers vary by more than 10% from scheduling alone: 0.5 ms of slack.
        sb.check(`${mode}, ${size} abstracts, cold within 10%`, row.coldNow <= row.coldBase * 1.1 + 0.5, `${round(coldRatio)}x`);
        sb.check(`${mode}, ${size} abstracts, warm within 10%`, row.warmNow <= row.warmBase * 1.1 + 0.5, `${round(warmRatio)}x`);
      }
    }
  } finally {
    fs.rmSync(base.dir, { recursive: true, force: true });
    fs.rmSync(docsDir, { recursive: true, force: true });
  }
  sb.note('Ratio: this tree over the base revision, medians of the same calls in alternating order; each server in its own process.');
  return sb.finish();
}

if (isMain(import.meta.url)) await runStandalone(run);
