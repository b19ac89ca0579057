/**
 * npm run eval -- --corpus F --queries F --qrels F --mode lexical|dense|hybrid [--rerank]
 *                 [--embedder ID] [--dataset DIR --split train]
 *                 [--via index|collection [--as md|txt]]   (collection: through ingestion and search_collection)
 * Prints ONE JSON line: {ndcg_at_10, recall_at_100, mrr_at_10, hit_at_5, queries, seconds, mode, ...}.
 * On failure prints {error, code} to stderr and exits non-zero (MODEL_UNAVAILABLE: exit 3).
 *
 * Tuning flags (measurement only; production defaults live in the code): --k1 --b --b-title
 * --title-weight --stem porter|none --stop lucene|extended|none --fields bm25f|concat|body
 * --no-decimals --join-hyphen --languages [--grams 0] --diversity X|off --limit N.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runEval } from '../src/retrieval/eval/run-eval.ts';
import { RETRIEVAL_MODES, type RetrievalMode } from '../src/retrieval/search.ts';
import { isToolError, toolError } from '../src/errors.ts';
import { loadConfig } from '../src/config.ts';
import { resolveEvalModels } from './eval-models.ts';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string' },
      queries: { type: 'string' },
      qrels: { type: 'string' },
      dataset: { type: 'string' },
      split: { type: 'string', default: 'test' },
      mode: { type: 'string', default: 'lexical' },
      rerank: { type: 'boolean', default: false },
      embedder: { type: 'string' },
      k1: { type: 'string' },
      b: { type: 'string' },
      'b-title': { type: 'string' },
      'title-weight': { type: 'string' },
      stem: { type: 'string' },
      stop: { type: 'string' },
      fields: { type: 'string' },
      'no-decimals': { type: 'boolean', default: false },
      'join-hyphen': { type: 'boolean', default: false },
      grams: { type: 'string' },
      languages: { type: 'boolean', default: false },
      via: { type: 'string', default: 'index' },
      as: { type: 'string', default: 'md' },
      diversity: { type: 'string' },
      limit: { type: 'string' },
    },
    strict: true,
  });
  const mode = values.mode as RetrievalMode;
  if (!RETRIEVAL_MODES.includes(mode)) throw toolError('VALIDATION_ERROR', `--mode must be one of ${RETRIEVAL_MODES.join(', ')}`);
  const dir = values.dataset ? path.resolve(values.dataset) : null;
  const file = (given: string | undefined, name: string) => {
    if (given) return path.resolve(given);
    if (dir) return path.join(dir, name);
    throw toolError('VALIDATION_ERROR', `give --${name.split('.')[0]} FILE or --dataset DIR`);
  };
  const corpus = file(values.corpus, 'corpus.jsonl');
  const queries = file(values.queries, `queries.${values.split}.jsonl`);
  const qrels = file(values.qrels, `qrels.${values.split}.tsv`);

  const num = (v: string | undefined, name: string) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw toolError('VALIDATION_ERROR', `--${name} must be a number`);
    return n;
  };
  const bm25 = Object.fromEntries(
    Object.entries({ k1: num(values.k1, 'k1'), b: num(values.b, 'b'), bTitle: num(values['b-title'], 'b-title'), titleWeight: num(values['title-weight'], 'title-weight') }).filter(([, v]) => v !== undefined),
  );
  const stem = values.stem === undefined ? undefined : values.stem !== 'none';
  const stop = values.stop as 'lucene' | 'extended' | 'none' | undefined;
  if (stop !== undefined && !['lucene', 'extended', 'none'].includes(stop)) throw toolError('VALIDATION_ERROR', '--stop must be lucene, extended or none');
  const fields = values.fields as 'bm25f' | 'concat' | 'body' | undefined;
  if (fields !== undefined && !['bm25f', 'concat', 'body'].includes(fields)) throw toolError('VALIDATION_ERROR', '--fields must be bm25f, concat or body');
  const diversity = values.diversity === undefined ? undefined : values.diversity === 'off' ? false : num(values.diversity, 'diversity');

  if (values.via === 'collection') {
    if (values.as !== 'md' && values.as !== 'txt') throw toolError('VALIDATION_ERROR', '--as must be md or txt');
    const { runCollectionEval } = await import('./eval-collection.ts');
    const result = await runCollectionEval({ corpus, queries, qrels, mode, rerank: values.rerank, as: values.as, limit: num(values.limit, 'limit') });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  if (values.via !== 'index') throw toolError('VALIDATION_ERROR', '--via must be index or collection');
  const config = loadConfig();
  const models = await resolveEvalModels(config, { mode, embedderId: values.embedder, rerank: values.rerank });
  try {
    const result = await runEval({
      corpus,
      queries,
      qrels,
      mode,
      embedder: models.embedder,
      rerank: models.rerank,
      cacheDir: path.join(config.dataDir, 'eval'),
      analyzer: { stem, stopWords: stop, keepDecimals: !values['no-decimals'], joinHyphenated: values['join-hyphen'], languages: values.languages, grams: values.grams === '0' ? 0 : 3 },
      bm25,
      fields,
      diversity,
      limit: num(values.limit, 'limit'),
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await models.close();
  }
}

main().catch((err: unknown) => {
  const code = isToolError(err) ? err.code : 'INTERNAL_ERROR';
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`${JSON.stringify({ error: message, code })}\n`);
  process.exitCode = code === 'MODEL_UNAVAILABLE' ? 3 : code === 'VALIDATION_ERROR' ? 2 : 1;
});
