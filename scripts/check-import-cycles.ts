/**
 * Reports import cycles among the server's own modules: every relative import (value, `import type`,
 * `export ... from`, and `import('...')` with a literal path) in src/, routes/ and plugins/.
 * Prints each cycle found and exits 1 when there is any; prints "no import cycles" and exits 0 otherwise.
 *
 *   npx tsx scripts/check-import-cycles.ts            # src/, routes/, plugins/
 *   npx tsx scripts/check-import-cycles.ts scripts    # other folders, relative to the working directory
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const DEFAULT_DIRS = ['src', 'routes', 'plugins'];
const SOURCE = /\.(ts|mts|mjs|js)$/;
/** `from '...'` (import / export), bare `import '...'`, and `import('...')` with a literal. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** Drops comments so that an example in a doc comment is not read as an import. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

function importGraph(root: string, dirs: string[]): Map<string, string[]> {
  const files = dirs.map((d) => path.join(root, d)).filter((d) => existsSync(d)).flatMap((d) => walk(d, []));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const deps = new Set<string>();
    for (const m of stripComments(readFileSync(file, 'utf8')).matchAll(SPECIFIER)) {
      const target = path.resolve(path.dirname(file), m[1]);
      if (known.has(target)) deps.add(target);
    }
    graph.set(file, [...deps].sort());
  }
  return graph;
}

/** Strongly connected components with more than one module (or a module importing itself). */
function findCycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}

/** One concrete loop through a component, for the report: a -> b -> ... -> a. */
function loopThrough(scc: string[], graph: Map<string, string[]>): string[] {
  const members = new Set(scc);
  const start = scc[0];
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const loop = [start];
        for (let x = v; x !== start; x = prev.get(x)!) loop.splice(1, 0, x);
        return [...loop, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

const root = process.cwd();
const dirs = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_DIRS;
const graph = importGraph(root, dirs);
const cycles = findCycles(graph);
const rel = (f: string) => path.relative(root, f);
if (cycles.length === 0) {
  process.stdout.write(`no import cycles (${graph.size} modules in ${dirs.join('/, ')}/)\n`);
} else {
  for (const scc of cycles) {
    process.stdout.write(`cycle (${scc.length} modules): ${loopThrough(scc, graph).map(rel).join(' -> ')}\n`);
    if (scc.length > 2) process.stdout.write(`  members: ${scc.map(rel).join(', ')}\n`);
  }
  process.stdout.write(`${cycles.length} import cycle(s)\n`);
  process.exitCode = 1;
}
