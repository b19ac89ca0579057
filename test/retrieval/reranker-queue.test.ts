import t from 'tap';
import { RerankQueue } from '../../src/retrieval/rerank-queue.ts';
import type { Reranker } from '../../src/retrieval/types.ts';

/** A reranker whose calls finish when the test says so; scores are passage lengths. */
function gatedReranker() {
  const gates: Array<() => void> = [];
  let calls = 0;
  const r: Reranker = {
    id: 'test:gated',
    async score(_q, passages) {
      calls++;
      await new Promise<void>((resolve) => gates.push(resolve));
      return passages.map((p) => p.length);
    },
  };
  return { r, openOne: () => gates.shift()?.(), calls: () => calls, waiting: () => gates.length };
}

const tick = () => new Promise((r) => setImmediate(r));

t.test('used: scores in passage order', async (t) => {
  const q = new RerankQueue({ reranker: () => ({ id: 'x', score: async (_q, p) => p.map((s) => s.length) }), concurrency: 2, maxQueue: 4, waitMs: 1000 });
  t.same(await q.run('q', ['a', 'bbb', 'cc']), { status: 'used', scores: [1, 3, 2] });
  t.same(await q.run('q', []), { status: 'used', scores: [] });
  t.match(q.stats(), { used: 2, running: 0, queued: 0 });
});

t.test('unavailable: no model, with the reason', async (t) => {
  const q = new RerankQueue({ reranker: () => null, unavailableReason: () => 'no weights in /models', concurrency: 2, maxQueue: 4, waitMs: 1000 });
  t.same(await q.run('q', ['a']), { status: 'unavailable', reason: 'no weights in /models' });
});

t.test('failed: scoring threw or returned the wrong count', async (t) => {
  const boom = new RerankQueue({ reranker: () => ({ id: 'x', score: async () => { throw new Error('session crashed'); } }), concurrency: 1, maxQueue: 1, waitMs: 100 });
  t.same(await boom.run('q', ['a']), { status: 'failed', reason: 'reranking failed: session crashed' });
  const short = new RerankQueue({ reranker: () => ({ id: 'x', score: async () => [1] }), concurrency: 1, maxQueue: 1, waitMs: 100 });
  t.match(await short.run('q', ['a', 'b']), { status: 'failed', reason: /1 scores for 2 passages/ });
  t.equal(boom.stats().running, 0, 'slot released after a failure');
});

t.test('concurrency limit, bounded backlog, queue-full skip', async (t) => {
  const g = gatedReranker();
  const q = new RerankQueue({ reranker: () => g.r, concurrency: 2, maxQueue: 1, waitMs: 60_000 });
  const a = q.run('q', ['a']);
  const b = q.run('q', ['bb']);
  const c = q.run('q', ['ccc']);
  await tick();
  t.equal(g.calls(), 2, 'two run at once');
  t.match(q.stats(), { running: 2, queued: 1 });
  t.match(await q.run('q', ['d']), { status: 'skipped', reason: /queue full \(2 running, 1 waiting\)/ }, 'a fourth is skipped at once');
  g.openOne();
  t.same(await a, { status: 'used', scores: [1] });
  await tick();
  t.equal(g.calls(), 3, 'the waiting job took the freed slot');
  g.openOne();
  g.openOne();
  t.same(await b, { status: 'used', scores: [2] });
  t.same(await c, { status: 'used', scores: [3] });
  t.match(q.stats(), { running: 0, queued: 0, used: 3, skipped: 1 });
});

t.test('wait limit: a job that waits too long is skipped and leaves the queue', async (t) => {
  const g = gatedReranker();
  const q = new RerankQueue({ reranker: () => g.r, concurrency: 1, maxQueue: 5, waitMs: 30 });
  const first = q.run('q', ['a']);
  await tick();
  const started = Date.now();
  t.match(await q.run('q', ['b']), { status: 'skipped', reason: 'waited 30 ms for a rerank slot' });
  t.ok(Date.now() - started >= 25, 'waited about the limit');
  t.equal(q.stats().queued, 0);
  g.openOne();
  t.same(await first, { status: 'used', scores: [1] });
  t.equal(g.calls(), 1, 'the skipped job never ran');
});

t.test('an aborted request waiting for a slot is skipped; close() skips the backlog', async (t) => {
  const g = gatedReranker();
  const q = new RerankQueue({ reranker: () => g.r, concurrency: 1, maxQueue: 5, waitMs: 60_000 });
  const first = q.run('q', ['a']);
  await tick();
  const ac = new AbortController();
  const waiting = q.run('q', ['b'], ac.signal);
  ac.abort();
  t.same(await waiting, { status: 'skipped', reason: 'request aborted' });
  const backlog = q.run('q', ['c']);
  q.close();
  t.same(await backlog, { status: 'skipped', reason: 'reranker is shut down' });
  t.same(await q.run('q', ['d']), { status: 'unavailable', reason: 'reranker is shut down' });
  g.openOne();
  t.same(await first, { status: 'used', scores: [1] }, 'the running job still finishes');
});
