/** onAbort (src/util/abort.ts): many followers of one signal share its single listener. */
import t from 'tap';
import { onAbort } from '../../src/util/abort.ts';

t.test('followers still following when the signal aborts are called once each; forgotten ones are not', async (t) => {
  const controller = new AbortController();
  const calls: number[] = [];
  const forget = Array.from({ length: 10 }, (_, i) => onAbort(controller.signal, () => calls.push(i)));
  for (let i = 0; i < 10; i += 2) forget[i]!();
  controller.abort();
  controller.abort();
  t.same(calls, [1, 3, 5, 7, 9]);
});

t.test('a signal that already aborted calls the follower at once', async (t) => {
  const controller = new AbortController();
  controller.abort();
  let called = 0;
  const forget = onAbort(controller.signal, () => called++);
  t.equal(called, 1);
  forget();
  t.equal(called, 1);
});

t.test('a follower may forget another while the signal dispatches', async (t) => {
  const controller = new AbortController();
  const calls: string[] = [];
  let forgetB = (): void => {};
  onAbort(controller.signal, () => {
    calls.push('a');
    forgetB();
  });
  forgetB = onAbort(controller.signal, () => calls.push('b'));
  controller.abort();
  // As with EventTarget listeners: one removed during the dispatch, before its turn, is not called.
  t.same(calls, ['a']);
});
