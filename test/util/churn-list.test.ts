/** ChurnList (src/util/churn-list.ts): members leave through the remover add returned, in any order. */
import t from 'tap';
import { ChurnList } from '../../src/util/churn-list.ts';

const members = <T extends object>(list: ChurnList<T>): T[] => {
  const out: T[] = [];
  list.forEach((v) => out.push(v));
  return out;
};

t.test('members are visited oldest first; removers take out exactly their member, once', async (t) => {
  const list = new ChurnList<{ n: number }>();
  const items = Array.from({ length: 6 }, (_, n) => ({ n }));
  const removers = items.map((item) => list.add(item));
  t.equal(list.size, 6);
  // The first, a middle one and the last: head, inner and tail links.
  removers[0]!();
  removers[3]!();
  removers[5]!();
  removers[3]!();
  t.equal(list.size, 3);
  t.same(members(list).map((m) => m.n), [1, 2, 4]);
  // Adding after removals at the tail appends after the remaining members.
  list.add(items[5]!);
  t.same(members(list).map((m) => m.n), [1, 2, 4, 5]);
  for (const r of removers) r();
  t.equal(list.size, 1, 'the re-added member has its own remover');
  t.same(members(list).map((m) => m.n), [5]);
});

t.test('the same object added twice is two members', async (t) => {
  const list = new ChurnList<object>();
  const x = {};
  const a = list.add(x);
  list.add(x);
  a();
  t.equal(list.size, 1);
  t.same(members(list), [x]);
});

t.test('forEach skips a member removed before its turn and does not visit one added meanwhile', async (t) => {
  const list = new ChurnList<{ name: string }>();
  const seen: string[] = [];
  let removeC = (): void => {};
  list.add({ name: 'a' });
  list.add({ name: 'b' });
  removeC = list.add({ name: 'c' });
  list.forEach((m) => {
    seen.push(m.name);
    if (m.name === 'a') {
      removeC();
      list.add({ name: 'd' });
    }
  });
  t.same(seen, ['a', 'b']);
  t.same(members(list).map((m) => m.name), ['a', 'b', 'd']);
});

t.test('a list emptied in any order is empty and accepts members again', async (t) => {
  const list = new ChurnList<{ n: number }>();
  for (let round = 0; round < 3; round++) {
    const removers = Array.from({ length: 50 }, (_, n) => list.add({ n }));
    // Interleaved: odd ones first, then the evens from the back.
    for (let i = 1; i < 50; i += 2) removers[i]!();
    for (let i = 48; i >= 0; i -= 2) removers[i]!();
    t.equal(list.size, 0);
    t.same(members(list), []);
  }
});
