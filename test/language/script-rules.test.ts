/** Script census and the orthographic rules for shared scripts. */
import t from 'tap';
import { countScripts, dominantScript, scriptOf } from '../../src/language/scripts.ts';
import {
  arabicScriptByLetters,
  cyrillicAllowed,
  devanagariByCues,
  devanagariCues,
  SCRIPT_CANDIDATES,
} from '../../src/language/script-rules.ts';
import { SINGLE_LANGUAGE_SCRIPTS } from '../../src/language/scripts.ts';
import { detectLanguage } from '../../src/language/detect.ts';
import { LANGUAGE_NAMES, SUPPORTED_LANGUAGES, languageName } from '../../src/language/languages.ts';

t.test('scriptOf maps letters to scripts and skips digits and punctuation', async (t) => {
  t.equal(scriptOf('a'.codePointAt(0)!), 'Latin');
  t.equal(scriptOf('ж'.codePointAt(0)!), 'Cyrillic');
  t.equal(scriptOf('ع'.codePointAt(0)!), 'Arabic');
  t.equal(scriptOf('क'.codePointAt(0)!), 'Devanagari');
  t.equal(scriptOf('ি'.codePointAt(0)!), 'Bengali', 'vowel signs count with their script');
  t.equal(scriptOf('ਕ'.codePointAt(0)!), 'Gurmukhi');
  t.equal(scriptOf('か'.codePointAt(0)!), 'Kana');
  t.equal(scriptOf('漢'.codePointAt(0)!), 'Han');
  t.equal(scriptOf('𠀀'.codePointAt(0)!), 'Han');
  t.equal(scriptOf('한'.codePointAt(0)!), 'Hangul');
  t.equal(scriptOf('५'.codePointAt(0)!), undefined, 'Devanagari digit');
  t.equal(scriptOf('।'.codePointAt(0)!), undefined, 'danda');
  t.equal(scriptOf('。'.codePointAt(0)!), undefined, 'CJK full stop');
  t.equal(scriptOf('7'.codePointAt(0)!), undefined);
});

t.test('census weights ideographs and finds the dominant script', async (t) => {
  const census = countScripts('abc 漢字 かな 123');
  t.equal(census.counts.Latin, 3);
  t.equal(census.counts.Han, 4, 'two ideographs, weight 2');
  t.equal(census.kana, 2);
  t.equal(census.han, 2);
  t.same(dominantScript(census), { script: 'Kana', share: 8 / 11 });
  t.equal(dominantScript(countScripts('中文和English混合的句子'))?.script, 'Han');
  t.equal(dominantScript(countScripts('!!! 123 ...')), undefined);
});

t.test('Japanese needs kana; Chinese has none', async (t) => {
  t.equal(detectLanguage('東京都の人口は約千四百万人です。').language_code, 'ja');
  t.equal(detectLanguage('东京都的人口约为一千四百万人。').language_code, 'zh');
  t.equal(detectLanguage('臺北市是中華民國的首都，人口約兩百五十萬。').language_code, 'zh', 'traditional characters');
});

t.test('Cyrillic letters rule languages in and out', async (t) => {
  t.notOk(cyrillicAllowed('uk', 'До завтра на вокзале.'), 'Ukrainian needs і, ї, є or ґ');
  t.ok(cyrillicAllowed('uk', 'До завтра на вокзалі.'));
  t.notOk(cyrillicAllowed('ru', 'Їжак'), 'Russian has no ї');
  t.notOk(cyrillicAllowed('bg', 'Мы были там'), 'Bulgarian has no ы');
  t.notOk(cyrillicAllowed('sr', 'Мама мыла раму'), 'Serbian needs ђ ј љ њ ћ џ');
  t.ok(cyrillicAllowed('sr', 'Ово је моја кућа'));
  t.ok(cyrillicAllowed('xx', 'anything'), 'no rule: allowed');
  t.equal(detectLanguage('До завтра на вокзале.').language_code, 'ru');
  t.equal(detectLanguage('Встречу перенесли на три часа дня.').language_code, 'ru');
  t.equal(detectLanguage('Ми зустрінемося завтра на вокзалі о дев’ятій ранку.').language_code, 'uk');
});

t.test('Arabic script: Urdu and Arabic letters decide when they are clear', async (t) => {
  t.equal(arabicScriptByLetters('میری بہن لاہور میں رہتی ہے اور ڈاکٹر ہے۔'), 'ur');
  t.equal(arabicScriptByLetters('تعيش أختي في القاهرة وتعمل طبيبة في مستشفى كبير.'), 'ar');
  t.equal(arabicScriptByLetters('کتاب'), undefined, 'too little evidence');
  t.equal(detectLanguage('خواهرم پنج سال است که در تهران زندگی می‌کند.').language_code, 'fa');
});

t.test('Devanagari: function words and endings separate Hindi, Marathi and Nepali', async (t) => {
  t.same(devanagariCues('मेरी बहन जयपुर में रहती है और डॉक्टर है।'), { hi: 4, mr: 0, ne: 0 });
  t.same(devanagariCues('माझी बहीण पुण्यात राहते आणि डॉक्टर आहे.'), { hi: 0, mr: 2, ne: 0 });
  t.same(devanagariCues('मेरी दिदी पोखरामा बस्छिन् र डाक्टर हुन्।'), { hi: 0, mr: 0, ne: 2 });
  t.equal(devanagariCues('शाळेत मुले खेळतात').mr, 2, 'ळ is Marathi');
  t.same(devanagariByCues('यह किताब अच्छी है'), { language: 'hi', strength: 2 / 3 }, 'two cues: partial evidence');
  t.same(devanagariByCues('यह किताब मेरी है और अच्छी है'), { language: 'hi', strength: 1 });
  t.same(devanagariByCues('हे पुस्तक माझे आहे आणि ते चांगले आहे'), { language: 'mr', strength: 1 });
  t.equal(devanagariByCues('नमस्ते दोस्तों'), undefined, 'no cues');
  t.equal(devanagariByCues('है आहे'), undefined, 'one cue each: undecided');
  t.equal(detectLanguage('नेपाल हिमालयको काखमा रहेको एउटा सुन्दर देश हो, जहाँ धेरै जातिका मानिसहरू बस्छन्।').language_code, 'ne');
});

t.test('every language the detector can report has a name', async (t) => {
  const reachable = new Set<string>([
    ...Object.values(SCRIPT_CANDIDATES).flat(),
    ...Object.values(SINGLE_LANGUAGE_SCRIPTS),
    'ja',
    'zh',
  ] as string[]);
  t.same([...reachable].sort(), [...SUPPORTED_LANGUAGES].sort());
  for (const code of SUPPORTED_LANGUAGES) {
    t.match(code, /^[a-z]{2}$/);
    t.equal(languageName(code), LANGUAGE_NAMES[code]);
  }
  t.equal(languageName('xx'), 'xx');
});
