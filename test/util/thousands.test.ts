import t from 'tap';
import { thousands } from '../../src/util/thousands.ts';

t.test('writes what toLocaleString("en-US") writes for integers', async (t) => {
  for (const n of [0, 7, 999, 1000, 12_345, 100_000, 1_000_000, 50_000, 987_654_321, Number.MAX_SAFE_INTEGER, -1234, -999]) {
    t.equal(thousands(n), n.toLocaleString('en-US'), String(n));
  }
});
