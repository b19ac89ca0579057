import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import iconv from 'iconv-lite';
import { decodeText, charsetFromContentType } from '../../src/extractors/decode-text.ts';

const corpus = path.resolve(import.meta.dirname, '../../../shared/corpus');
const sample = 'Name,City\nZoë,Malmö — “quoted”\n';

t.test('byte-order marks win and are stripped', async (t) => {
  const cases: Array<[string, Buffer]> = [
    ['utf-8', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(sample, 'utf8')])],
    ['utf-16le', Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(sample, 'utf-16le')])],
    ['utf-16be', Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(sample, 'utf-16be')])],
    ['utf-32le', Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), iconv.encode(sample, 'utf-32le')])],
    ['utf-32be', Buffer.concat([Buffer.from([0, 0, 0xfe, 0xff]), iconv.encode(sample, 'utf-32be')])],
  ];
  for (const [encoding, bytes] of cases) {
    t.same(decodeText(bytes), { text: sample, encoding }, encoding);
  }
});

t.test('declared charset is used; a false UTF-8 claim falls back to sniffing', async (t) => {
  t.equal(charsetFromContentType('text/csv; charset="Shift_JIS"'), 'shift_jis');
  t.equal(charsetFromContentType('text/csv'), null);
  const latin = iconv.encode('Café crème', 'latin1');
  t.same(decodeText(latin, { contentType: 'text/plain; charset=iso-8859-1' }), { text: 'Café crème', encoding: 'iso-8859-1' });
  t.same(decodeText(latin, { contentType: 'text/plain; charset=utf-8' }), { text: 'Café crème', encoding: 'windows-1252' });
  const sjis = iconv.encode('日本語のテキスト', 'shift_jis');
  t.same(decodeText(sjis, { contentType: 'text/plain; charset=Shift_JIS' }), { text: '日本語のテキスト', encoding: 'shift_jis' });
});

t.test('valid UTF-8 without BOM', async (t) => {
  t.same(decodeText(Buffer.from(sample, 'utf8')), { text: sample, encoding: 'utf-8' });
  t.same(decodeText(Buffer.alloc(0)), { text: '', encoding: 'utf-8' });
});

t.test('UTF-16 without BOM from the NUL pattern', async (t) => {
  t.same(decodeText(iconv.encode('Team,Cups\nBlues,1\n', 'utf-16le')), { text: 'Team,Cups\nBlues,1\n', encoding: 'utf-16le' });
  t.same(decodeText(iconv.encode('Team,Cups\nBlues,1\n', 'utf-16be')), { text: 'Team,Cups\nBlues,1\n', encoding: 'utf-16be' });
});

t.test('Shift-JIS is recognised structurally (test_mskanji.csv, cp932 with 髙)', async (t) => {
  const bytes = fs.readFileSync(path.join(corpus, 'csv/test_mskanji.csv'));
  const { text, encoding } = decodeText(bytes);
  t.equal(encoding, 'shift_jis');
  t.equal(text, '名前,年齢,住所\r\n佐藤太郎,30,東京\r\n三木英子,25,大阪\r\n髙橋淳,35,名古屋\r\n');
});

t.test('cp1252 fallback keeps accents and smart quotes', async (t) => {
  const bytes = iconv.encode('Résumé: “naïve” café – 5€', 'windows-1252');
  t.same(decodeText(bytes), { text: 'Résumé: “naïve” café – 5€', encoding: 'windows-1252' });
});

t.test('binary-looking bytes decode as UTF-8 with replacement, not mojibake', async (t) => {
  const bytes = Buffer.from([0x01, 0x02, 0x03, 0x9f, 0x04, 0x05, 0x41, 0x06, 0x07, 0x08, 0xff, 0x10]);
  const { text, encoding } = decodeText(bytes);
  t.equal(encoding, 'utf-8');
  t.ok(text.includes('\uFFFD'));
});
