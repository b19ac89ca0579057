/**
 * The garbled-text-layer check's letter count: the code points of the text's /\p{L}+/gu runs,
 * counted without a match per run.
 */
import t from 'tap';
import { seededRandom } from '../seeded-random.ts';
import { letterCount } from '../../src/extractors/pdf/ocr-text-layer.ts';

const reference = (s: string) => {
  let n = 0;
  for (const m of s.matchAll(/\p{L}+/gu)) n += [...m[0]].length;
  return n;
};

t.test('letterCount gives the code points of the \\p{L}+ runs', async (t) => {
  // ASCII edges (@ [ ` {), Latin-1, other scripts, marks, digits, astral letters and symbols, lone surrogates.
  const alphabet = ['a', 'z', 'A', 'Z', '@', '[', '`', '{', '0', ' ', '-', 'é', 'ß', '\u00aa', '\u00d7', 'Ω', 'я', 'ع', '中', 'ー', '\u0301', '٣', '\ud835\udc00', '\ud83d\ude00', '\ud800', '\udc00', '\u2028', '\uffff'];
  const rand = seededRandom(5);
  const differing: string[] = [];
  for (let i = 0; i < 5000; i++) {
    let s = '';
    for (let k = rand(20); k > 0; k--) s += alphabet[rand(alphabet.length)];
    if (letterCount(s) !== reference(s)) differing.push(JSON.stringify(s));
  }
  t.same(differing, [], 'every random string');
  t.equal(letterCount('Hello, мир 中文 \ud835\udc00!'), 11, '5 + 3 + 2 + 1 (an astral letter is one)');
});
