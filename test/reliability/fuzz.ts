/**
 * The mutation fuzzer: mutants of the generated fixtures (and of the shared corpus when
 * CORPUS_DIR or ../shared/corpus exists) uploaded one at a time, process_document mostly and
 * retrieve_chunks every fifth. One row per mutator; a failing mutant is named by its index so
 * `--seed S --count N` rebuilds it exactly.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURE_KINDS, FIXTURE_NAMES, fixtureFile } from '../fixtures-gen/documents.ts';
import { answerText, judge, upload, type Case, type Ctx } from './cases.ts';
import { call, measure, Server, stillAlive } from './harness.ts';
import { mutants, type Mutant, type MutatorName } from './mutate.ts';
import type { Row } from './table.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface Source {
  name: string;
  bytes: Buffer;
}

export async function generatedSources(): Promise<Source[]> {
  const kinds = FIXTURE_KINDS.filter((k) => k !== 'encrypted');
  return Promise.all(kinds.map(async (k) => ({ name: `gen:${FIXTURE_NAMES[k]}`, bytes: await fixtureFile(k) })));
}

/** Up to `perKind` files under 2 MB from each corpus folder, in name order; [] without a corpus. */
export function corpusSources(perKind: number): { dir: string | null; sources: Source[] } {
  const dir = path.resolve(ROOT, process.env.CORPUS_DIR || '../shared/corpus');
  if (!fs.existsSync(dir)) return { dir: null, sources: [] };
  const sources: Source[] = [];
  for (const kind of fs.readdirSync(dir).sort()) {
    const sub = path.join(dir, kind);
    if (!fs.statSync(sub).isDirectory()) continue;
    const files = fs
      .readdirSync(sub)
      .sort()
      .filter((f) => !f.includes('.expected.') && fs.statSync(path.join(sub, f)).size <= 2 * 1024 * 1024)
      .slice(0, perKind);
    for (const f of files) sources.push({ name: `corpus:${kind}/${f}`, bytes: fs.readFileSync(path.join(sub, f)) });
  }
  return { dir, sources };
}

const FUZZ_CASE: Case = { group: 'fuzz', input: 'mutant', legit: true, request: () => ({ path: '' }) };

function requestFor(m: Mutant) {
  const name = path.basename(m.source.replace(/^\w+:/, ''));
  return m.index % 5 === 4
    ? upload('/v1/documents/retrieve', m.bytes, name, 'query=report%20summary&top_k=3')
    : upload('/v1/documents/process', m.bytes, name);
}

export async function runFuzz(ctx: Ctx, sources: Source[], seed: number, count: number): Promise<Row[]> {
  const byMutator = new Map<MutatorName, Mutant[]>();
  for (const m of mutants(sources, seed, count)) {
    const list = byMutator.get(m.mutator) ?? [];
    list.push(m);
    byMutator.set(m.mutator, list);
  }
  const rows: Row[] = [];
  for (const [mutator, list] of byMutator) {
    const statuses = new Map<string, number>();
    const failures: string[] = [];
    let maxMs = 0;
    let bytes = 0;
    const m = await measure(ctx.server, async () => {
      for (const mutant of list) {
        const req = requestFor(mutant);
        bytes += mutant.bytes.byteLength;
        const server = ctx.server;
        const a = await call(server.base + req.path, { headers: req.headers, body: req.body, timeoutMs: ctx.limits.callTimeoutMs });
        maxMs = Math.max(maxMs, a.ms);
        const key = answerText(a);
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        const wrong = judge(FUZZ_CASE, a, server);
        const where = `#${mutant.index} ${mutant.source} (${mutant.note})`;
        if (wrong) failures.push(`${where}: ${wrong}`);
        if (!(await stillAlive(server))) {
          failures.push(`${where}: server died (${JSON.stringify(server.exit)})`);
          await server.stop();
          // The measurement stays on the dead server's figures; the rest of the group runs on a fresh one.
          ctx.server = await Server.start(ctx.serverOptions);
          break;
        }
      }
    });
    if (m.healthMaxMs > ctx.limits.healthBudgetMs) failures.push(`/health took ${Math.round(m.healthMaxMs)} ms (budget ${ctx.limits.healthBudgetMs})`);
    if (m.healthFailures > 0) failures.push(`${m.healthFailures} /health probes failed`);
    if (m.rssPeakMb > ctx.limits.rssCeilingMb) failures.push(`RSS peak ${Math.round(m.rssPeakMb)} MB over ${ctx.limits.rssCeilingMb} MB`);
    await call(`${ctx.server.base}/v1/cache`, { headers: { 'content-type': 'application/json' }, body: '{"action":"clear"}', timeoutMs: 60_000 });
    const answers = [...statuses].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} x${n}`);
    rows.push({
      group: 'fuzz',
      input: `${mutator}: ${list.length} mutant${list.length === 1 ? '' : 's'}`,
      bytes,
      answer: answers.slice(0, 3).join(', ') + (answers.length > 3 ? ', ...' : ''),
      ms: maxMs,
      healthMaxMs: m.healthMaxMs,
      rssPeakMb: m.rssPeakMb,
      pass: failures.length === 0,
      reason: failures.length ? `${failures.length} problems: ${failures.slice(0, 5).join(' | ')}` : `answers: ${answers.join(', ')}`,
    });
  }
  return rows;
}
