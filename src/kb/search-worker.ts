/**
 * A search worker thread: holds search-only replicas of collection lexical indexes over the very
 * snapshot bytes the main thread loaded (a SharedArrayBuffer; see search-pool.ts) and answers
 * top-k queries with the index's own search, so its answers are the main thread's to the float.
 */
import { parentPort } from 'node:worker_threads';
import { Analyzer } from '../retrieval/tokenizer.ts';
import { CollectionLexicalIndex } from './lexical-index.ts';
import type { SearchWorkerReply, SearchWorkerRequest } from './search-worker-protocol.ts';

const port = parentPort!;
const replicas = new Map<number, CollectionLexicalIndex>();
const reply = (msg: SearchWorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(msg, transfer);
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

port.on('message', (req: SearchWorkerRequest) => {
  if (req.type === 'open') {
    try {
      const analyzer = new Analyzer({ ...req.analyzer, stem: req.analyzer.stem === 'porter' });
      replicas.set(req.replica, CollectionLexicalIndex.openReplica(Buffer.from(req.bytes, req.offset, req.length), analyzer));
      reply({ type: 'opened', replica: req.replica });
    } catch (err) {
      reply({ type: 'opened', replica: req.replica, error: errorText(err) });
    }
  } else if (req.type === 'close') {
    replicas.delete(req.replica);
  } else {
    try {
      const index = replicas.get(req.replica);
      if (!index) throw new Error(`replica ${req.replica} is not open`);
      const allowed = req.ids ? new Set(req.ids) : null;
      const hits = index.search(req.query, req.k, allowed ? (id) => allowed.has(id) : undefined, req.language);
      const ids = new Float64Array(hits.length);
      const scores = new Float64Array(hits.length);
      for (let i = 0; i < hits.length; i++) {
        ids[i] = hits[i].id;
        scores[i] = hits[i].score;
      }
      reply({ type: 'hits', id: req.id, ids, scores }, [ids.buffer, scores.buffer]);
    } catch (err) {
      reply({ type: 'failed', id: req.id, message: errorText(err) });
    }
  }
});
