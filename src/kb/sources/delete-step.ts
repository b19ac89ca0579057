/**
 * A source sync's deletion as a step of its job (issue 25): the queue runs it like a document
 * (counted in the job's progress, cancelled with it, resumed after a restart), and it deletes the
 * document with the reason (file deleted, HTTP 404/410, out of scope) in its 'deleted' history
 * row. A document already gone (deleted by hand, or by this step before a restart) is skipped.
 */
import { isToolError } from '../../errors.ts';
import type { ItemResult, ItemRun } from '../document-executor.ts';
import type { IndexRegistry } from '../index-registry.ts';
import type { CollectionRecord, DeleteStep, KbStoreApi } from '../types.ts';

export interface DeleteStepDeps {
  store: KbStoreApi;
  registry: Pick<IndexRegistry, 'settled' | 'removeChunks'>;
}

export async function runDeleteStep(deps: DeleteStepDeps, collection: CollectionRecord, run: ItemRun, step: DeleteStep): Promise<ItemResult> {
  run.signal.throwIfAborted();
  run.progress('indexing', {}, null);
  // After the collection's pending commits, as any delete (knowledge-base.ts deleteDocument).
  await deps.registry.settled(collection.name);
  run.signal.throwIfAborted();
  let removed: { version: number; removedChunkIds: number[] };
  try {
    removed = deps.store.deleteDocument(collection.id, step.document_id, { jobId: run.job.id, reason: step.reason });
  } catch (err) {
    if (isToolError(err) && err.code === 'NOT_FOUND') return { stage: 'skipped', documentId: step.document_id, note: `already deleted (${step.reason})` };
    throw err;
  }
  await deps.registry.removeChunks(collection, removed.version, removed.removedChunkIds);
  return { stage: 'done', documentId: step.document_id, note: `deleted: ${step.reason}` };
}
