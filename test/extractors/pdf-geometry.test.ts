/**
 * median, which the PDF layout asks of every page's box heights and every line's segments, gives
 * what sorting a copy with (a, b) => a - b and taking the middle gives, signed zeros and NaN included.
 */
import t from 'tap';
import { seededRandom } from '../seeded-random.ts';
import { median } from '../../src/extractors/pdf/pdf-geometry.ts';

const reference = (values: number[]) => (values.length ? [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] : 0);

t.test('median is the sorted copy\'s middle value', async (t) => {
  const pool = [0, -0, 1, -1, 2.5, 2.5, 10, -3.25, 1e-9, 7, NaN, Infinity, -Infinity, 12.75];
  const rand = seededRandom(3);
  const differing: string[] = [];
  for (let i = 0; i < 5000; i++) {
    const values = Array.from({ length: rand(9) }, () => pool[rand(pool.length)]);
    // Mostly without NaN, as the layout's values are: those take the typed-array path.
    if (i % 4 !== 0) for (let k = 0; k < values.length; k++) if (Number.isNaN(values[k])) values[k] = k;
    if (!Object.is(median(values), reference(values))) differing.push(String(values.map(String)));
  }
  t.same(differing, [], 'every random array (Object.is: -0 and 0 told apart)');
  const big = Array.from({ length: 501 }, (_, k) => ((k * 7919) % 1009) / 7);
  t.equal(median(big), reference(big));
  t.equal(median([3, 1, 2]), 2);
  t.ok(Object.is(median([0, -0, 5]), -0) && Object.is(median([-0, 0, 5]), 0), 'equal zeros keep their input order');
  t.equal(median([]), 0);
});
