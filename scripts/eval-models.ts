/**
 * The evaluation's access to the model layer: loads the models (ModelManager, same as the server),
 * then resolves the embedder and reranker a run asks for, or fails with MODEL_UNAVAILABLE saying
 * what is missing. Never substitutes another model for the one asked for.
 */
import pino from 'pino';
import type { Config } from '../src/config.ts';
import type { Embedder } from '../src/retrieval/types.ts';
import type { RerankFn, RetrievalMode } from '../src/retrieval/search.ts';
import { toolError } from '../src/errors.ts';
import { ModelManager } from '../src/retrieval/models/model-manager.ts';

export interface EvalModels {
  embedder: Embedder | null;
  rerank: RerankFn | null;
  close(): Promise<void>;
}

export async function resolveEvalModels(
  config: Readonly<Config>,
  want: { mode: RetrievalMode; embedderId?: string; rerank: boolean; corpusSize?: number },
): Promise<EvalModels> {
  const needEmbedder = want.mode !== 'lexical';
  if (!needEmbedder && !want.rerank) return { embedder: null, rerank: null, close: async () => {} };
  const models = new ModelManager({ config, log: pino({ level: 'warn' }, pino.destination(2)) });
  try {
    models.start();
    await models.ready();
    let embedder: Embedder | null = null;
    if (needEmbedder) {
      // Without --embedder: the embedder the server would pick for a corpus this size.
      embedder = want.embedderId ? models.embedderById(want.embedderId) : models.embedderFor(want.corpusSize ?? Number.MAX_SAFE_INTEGER);
      if (!embedder) {
        const why = want.embedderId
          ? `embedder "${want.embedderId}" is not available (ready: ${models.state().filter((s) => s.kind === 'embedder' && s.state === 'ready').map((s) => s.id).join(', ') || 'none'})`
          : models.denseUnavailableReason() ?? 'no embedder is ready';
        throw toolError('MODEL_UNAVAILABLE', `mode "${want.mode}" needs an embedding model: ${why}`);
      }
    }
    let rerank: RerankFn | null = null;
    if (want.rerank) {
      if (!models.rerankerId()) throw toolError('MODEL_UNAVAILABLE', `--rerank needs the reranker: ${models.rerankerUnavailableReason()}`);
      rerank = (q, p, s) => models.rerank(q, p, s);
    }
    return { embedder, rerank, close: () => models.close() };
  } catch (err) {
    await models.close();
    throw err;
  }
}
