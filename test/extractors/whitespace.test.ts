import t from 'tap';
import { seededRandom } from '../seeded-random.ts';
import { collapseWhitespace, nonSpaceLength } from '../../src/extractors/shared/whitespace.ts';

const reference = (s: string) => s.replace(/\s+/g, ' ').trim();

t.test('gives what replace(/\\s+/g, " ").trim() gives', async (t) => {
  const cases = ['', ' ', 'a', 'a b', ' a', 'a ', 'a  b', 'a\tb', 'a\nb', 'a\u00a0b', 'a\u2003b', '\ufeffa', 'a\u3000', 'one two three', 'x \n y', 'é ü 中文 ok'];
  for (const s of cases) t.equal(collapseWhitespace(s), reference(s), JSON.stringify(s));
  // Random strings over letters and every kind of whitespace.
  const alphabet = ['a', 'b', 'Z', '-', '|', ' ', ' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u1680', '\u2000', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff', '\u200b'];
  const rand = seededRandom(7);
  let same = 0;
  for (let i = 0; i < 5000; i++) {
    let s = '';
    for (let k = rand(12); k > 0; k--) s += alphabet[rand(alphabet.length)];
    if (collapseWhitespace(s) === reference(s)) same++;
  }
  t.equal(same, 5000, 'every random string');
});

t.test('a tidy string comes back as it is', async (t) => {
  const s = 'already tidy text';
  t.equal(collapseWhitespace(s), s);
});

t.test('nonSpaceLength gives replace(/\\s+/g, "").length', async (t) => {
  const alphabet = ['a', 'Z', '1', '-', '~', '\u007f', '\u0080', '\u0085', 'é', '中', '\ud83d\ude00', '\ud800', ' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u1680', '\u2000', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff', '\u200b', '\u180e'];
  const rand = seededRandom(11);
  const differing: string[] = [];
  for (let i = 0; i < 5000; i++) {
    let s = '';
    for (let k = rand(16); k > 0; k--) s += alphabet[rand(alphabet.length)];
    if (nonSpaceLength(s) !== s.replace(/\s+/g, '').length) differing.push(JSON.stringify(s));
  }
  t.same(differing, [], 'every random string');
  t.equal(nonSpaceLength(' a\u00a0b\u3000c\n'), 3);
  // Every UTF-16 code unit, alone, as /\s/ classes it.
  const wrong: string[] = [];
  for (let c = 0; c <= 0xffff; c++) {
    const unit = String.fromCharCode(c);
    if (nonSpaceLength(unit) !== (/\s/.test(unit) ? 0 : 1)) wrong.push(c.toString(16));
  }
  t.same(wrong, [], 'each code unit');
});
