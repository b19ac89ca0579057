/**
 * MCP progress while the SSE answer's socket is full: reports are held, the latest replaces older
 * ones, and it goes out when the response has room again (what routes/mcp.ts wires to the socket's
 * 'drain'). With no gate (stdio) every report goes out as it comes.
 */
import t from 'tap';
import { coalescedProgress, type ProgressGate } from '../../src/mcp/server.ts';

function gate() {
  let busy = false;
  const waiting: (() => void)[] = [];
  const g: ProgressGate = { busy: () => busy, whenFree: (fn) => void waiting.push(fn) };
  return {
    g,
    setBusy: (b: boolean) => (busy = b),
    drain: () => waiting.splice(0).forEach((fn) => fn()),
    waiting: () => waiting.length,
  };
}

t.test('a busy response gets only the latest report once it drains', async (t) => {
  const sent: number[] = [];
  const k = gate();
  const progress = coalescedProgress(k.g, (p) => sent.push(p.progress));
  progress({ progress: 1 });
  t.same(sent, [1], 'free: sent at once');
  k.setBusy(true);
  for (let i = 2; i <= 1000; i++) progress({ progress: i, total: 1000 });
  t.same(sent, [1], 'busy: nothing more is queued for the socket');
  t.equal(k.waiting(), 1, 'one wait for room, however many reports came');
  k.drain();
  t.same(sent, [1], 'still busy at the drain: keeps waiting');
  t.equal(k.waiting(), 1);
  k.setBusy(false);
  k.drain();
  t.same(sent, [1, 1000], 'the latest report goes out when there is room');
  progress({ progress: 1001 });
  t.same(sent, [1, 1000, 1001]);
});

t.test('without a gate every report goes out', async (t) => {
  const sent: number[] = [];
  const progress = coalescedProgress(undefined, (p) => sent.push(p.progress));
  for (let i = 0; i < 5; i++) progress({ progress: i });
  t.same(sent, [0, 1, 2, 3, 4]);
});
