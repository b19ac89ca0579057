/**
 * Shared set-up of the ordering tests (issue 19, "the content read last wins"): a knowledge base
 * whose document service holds the extraction of one chosen content (by sha256) until released,
 * so a job can be stopped between reading the bytes and committing them while another job on
 * the same source reads newer bytes and commits first. Everything else is real: files on disk,
 * the loopback HTTP server, the job runner, SQLite and the collection indexes.
 */
import { createHash } from 'node:crypto';
import type { Test } from 'tap';
import pino from 'pino';
import type { DocumentService } from '../../src/documents/document-service.ts';
import { KnowledgeBase } from '../../src/kb/knowledge-base.ts';
import type { KnowledgeBaseApi } from '../../src/kb/types.ts';
import { testConfig } from '../helper.ts';
import { startKb } from './jobs-fixtures.ts';

export const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** A ~2 MB plain text about `word` (the big, slow first version of the reproduction). */
export function bigText(word: string, bytes = 2 * 1024 * 1024): string {
  const line = `The ${word} survey notes record every sighting of the ${word} along the coast.\n`;
  return `Notes about ${word}\n\n${line.repeat(Math.ceil(bytes / line.length))}`;
}

export interface Hold {
  /** Resolves when a job reached extraction of the held content (its bytes are read). */
  reached: Promise<void>;
  release(): void;
}

export interface OrderFixture {
  kb: KnowledgeBaseApi;
  origin: string;
  route: Awaited<ReturnType<typeof startKb>>['server']['route'];
  /** Holds the next extraction of content with this sha256 until released. */
  hold(sha: string): Hold;
}

export async function startOrderKb(t: Test, env: Record<string, string> = {}): Promise<OrderFixture> {
  const fx = await startKb(t);
  const holds = new Map<string, { reached: () => void; gate: Promise<void> }>();
  const real = fx.services.documents;
  // A view of the real service whose load() waits on a hold first; every other member is the real one.
  const documents = new Proxy(real, {
    get(target, prop) {
      if (prop === 'load') {
        const load: DocumentService['load'] = async (source, ctx, opts) => {
          const sha = opts?.fetched?.sha256;
          const h = sha ? holds.get(sha) : undefined;
          if (h) {
            holds.delete(sha!);
            h.reached();
            await h.gate;
          }
          return target.load(source, ctx, opts);
        };
        return load;
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const config = testConfig(t, { ALLOW_PRIVATE_NETWORKS: 'true', INGEST_CONCURRENCY: '4', ...env });
  // The shared caches too: jobs bypass the download cache only when they are given it.
  const kb = new KnowledgeBase({ config, documents, caches: fx.services.caches, models: null, log: pino({ level: 'silent' }) });
  t.teardown(() => kb.close());
  return {
    kb,
    origin: fx.server.origin,
    route: fx.server.route.bind(fx.server),
    hold(sha) {
      let reached!: () => void;
      let release!: () => void;
      const reachedP = new Promise<void>((r) => (reached = r));
      const gate = new Promise<void>((r) => (release = r));
      holds.set(sha, { reached, gate });
      return { reached: reachedP, release };
    },
  };
}

export const search = (kb: KnowledgeBaseApi, collection: string, query: string) =>
  kb.search(collection, { query, top_k: 5 }, { signal: AbortSignal.timeout(60_000) });
