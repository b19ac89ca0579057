/** The rules around the classifier: short texts, the 5,000-character window, the vote, mixed text. */
import t from 'tap';
import {
  detectLanguage,
  detectSample,
  splitSamples,
  DETECTION_WINDOW_CHARS,
  SPLIT_THRESHOLD_CHARS,
} from '../../src/language/detect.ts';

const ENGLISH =
  'The committee reviewed the annual report and agreed that the new procedures had reduced waiting times. ' +
  'Members asked for clearer figures on costs and suggested that the next report should compare each region. ';
const GERMAN =
  'Der Ausschuss prüfte den Jahresbericht und stellte fest, dass die neuen Verfahren die Wartezeiten verkürzt haben. ' +
  'Die Mitglieder baten um genauere Zahlen zu den Kosten und schlugen einen Vergleich der Regionen vor. ';
const SPANISH =
  'El comité revisó el informe anual y acordó que los nuevos procedimientos habían reducido los tiempos de espera. ' +
  'Los miembros pidieron cifras más claras sobre los costes y propusieron comparar cada región en el próximo informe. ';

/** `text` repeated to exactly `chars` characters. */
function fill(text: string, chars: number): string {
  return text.repeat(Math.ceil(chars / text.length)).slice(0, chars);
}

t.test('text under 10 characters after trimming is English with low confidence', async (t) => {
  for (const text of ['hello', 'Bonjour', '   hola   ', 'Привет!', '明天车站见。', 'x', '\n\t  ok  \n']) {
    const result = detectLanguage(text);
    t.same(result, { language_code: 'en', language_name: 'English', confidence: 0.1 }, JSON.stringify(text));
  }
});

t.test('10 characters is enough to be judged', async (t) => {
  const korean = '안녕하세요 여러분들';
  t.equal([...korean].length, 10);
  t.equal(detectLanguage(korean).language_code, 'ko');
  // Characters are counted as code points: five supplementary-plane ideographs are five characters.
  t.equal(detectLanguage('𠀀𠀁𠀂𠀃𠀄').language_code, 'en');
  t.equal(detectLanguage('𠀀𠀁𠀂𠀃𠀄 中文文本内容').language_code, 'zh');
});

t.test('text without letters falls back to English with zero confidence', async (t) => {
  t.same(detectLanguage('12345 67890 !!! 3.14 -- 2024-01-01'), { language_code: 'en', language_name: 'English', confidence: 0 });
  t.same(detectLanguage('https://example.com/a/b/c?d=e mail@example.org'), {
    language_code: 'en',
    language_name: 'English',
    confidence: 0,
  });
});

t.test('only the first 5,000 characters are read', async (t) => {
  t.equal(DETECTION_WINDOW_CHARS, 5000);
  const englishThenGerman = fill(ENGLISH, DETECTION_WINDOW_CHARS) + fill(GERMAN, 50_000);
  t.equal(detectLanguage(englishThenGerman).language_code, 'en');
  const germanThenEnglish = fill(GERMAN, DETECTION_WINDOW_CHARS) + fill(ENGLISH, 50_000);
  t.equal(detectLanguage(germanThenEnglish).language_code, 'de');
  // Leading whitespace is trimmed before the window is taken.
  t.equal(detectLanguage(' '.repeat(10_000) + fill(GERMAN, 3000)).language_code, 'de');
});

t.test('three samples of the window vote: the majority wins', async (t) => {
  const third = DETECTION_WINDOW_CHARS / 3;
  const spanishHeader = fill(SPANISH, third) + fill(ENGLISH, 2 * third);
  const result = detectLanguage(spanishHeader);
  t.equal(result.language_code, 'en');
  t.ok(result.confidence < 0.7, `a split vote lowers confidence (${result.confidence})`);

  const englishAppendix = fill(GERMAN, 2 * third) + fill(ENGLISH, third + 20_000);
  t.equal(detectLanguage(englishAppendix).language_code, 'de');

  // The last sample is the tail of the window: German in its final 800 characters gets a vote.
  const germanTail = fill(ENGLISH, 4200) + fill(GERMAN, 800) + fill(ENGLISH, 10_000);
  const tail = detectLanguage(germanTail);
  t.equal(tail.language_code, 'en');
  t.ok(tail.confidence < 0.7, `the German tail voted (${tail.confidence})`);
  t.ok(detectLanguage(fill(ENGLISH, 20_000)).confidence > 0.9, 'without it the vote is unanimous');

  const unanimous = detectLanguage(fill(SPANISH, 20_000));
  t.equal(unanimous.language_code, 'es');
  t.ok(unanimous.confidence > 0.9, `unanimous samples are confident (${unanimous.confidence})`);
});

t.test('a three-way split still answers, with low confidence', async (t) => {
  const third = DETECTION_WINDOW_CHARS / 3;
  const mixed = fill(ENGLISH, third) + fill('தமிழ் மொழி இந்தியாவின் பழமையான மொழிகளில் ஒன்றாகும். ', third) + fill(GERMAN, third);
  const result = detectLanguage(mixed);
  t.ok(['en', 'ta', 'de'].includes(result.language_code), result.language_code);
  t.ok(result.confidence <= 0.34, `one vote of three (${result.confidence})`);
});

t.test('short texts are judged whole, long ones in three parts', async (t) => {
  t.equal(SPLIT_THRESHOLD_CHARS, 600);
  const parts = splitSamples(fill(ENGLISH, 3000));
  t.equal(parts.length, 3);
  t.equal(parts.join(''), fill(ENGLISH, 3000), 'the parts cover the text exactly');
  for (const part of parts) t.ok(part.length > 900 && part.length < 1100, `balanced part (${part.length})`);
  t.ok(parts[1].startsWith(' '), 'cut at a space');

  // No spaces (Chinese): cut at the exact third, never inside a surrogate pair.
  const wide = '𠀀'.repeat(600);
  const wideParts = splitSamples(wide);
  t.equal(wideParts.join(''), wide);
  for (const part of wideParts) t.notOk(/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(part), 'whole characters only');
});

t.test('mixed scripts: the dominant one decides', async (t) => {
  t.equal(detectLanguage('The word 你好 means hello in Mandarin, and people use it every day.').language_code, 'en');
  t.equal(detectLanguage('我们使用Python和PostgreSQL开发了这个系统，运行在Linux服务器上。').language_code, 'zh');
  t.equal(detectLanguage('मैंने कल नया laptop खरीदा और उस पर Windows install किया है।').language_code, 'hi');
  t.equal(detectLanguage('来週の会議はZoomで行います。資料はGoogle Driveに置いてあります。').language_code, 'ja');
  t.equal(detectLanguage('오늘 회의는 Zoom으로 진행합니다. 자료는 Google Drive에 있습니다.').language_code, 'ko');
  t.equal(detectLanguage('Der Vertrag (siehe https://example.com/vertrag.pdf) gilt ab dem ersten Januar für alle Mitarbeiter.').language_code, 'de');
});

t.test('a sample without letters abstains', async (t) => {
  t.equal(detectSample('1234567890 %%% ---'), undefined);
  t.equal(detectSample('Ceci est une phrase en français.')?.language, 'fr');
});
