/** detect_language through the REST adapter: schema, answers and validation errors. */
import t from 'tap';
import { buildTestApp } from '../helper.ts';
import { detectLanguageTool, DETECT_LANGUAGE_MAX_CHARS } from '../../src/tools/detect-language.ts';

const URL = '/v1/language/detect';

t.test('the tool declaration', async (t) => {
  t.equal(detectLanguageTool.name, 'detect_language');
  t.equal(detectLanguageTool.group, 'utility');
  t.equal(detectLanguageTool.timeoutClass, 'utility');
  t.same(detectLanguageTool.rest, { method: 'POST', path: URL });
  const input = detectLanguageTool.input as unknown as Record<string, any>;
  t.equal(input.additionalProperties, false);
  t.same(input.required, ['text']);
  t.equal(input.properties.text.minLength, 1);
  t.equal(input.properties.text.maxLength, DETECT_LANGUAGE_MAX_CHARS);
  t.equal(DETECT_LANGUAGE_MAX_CHARS, 100_000);
  t.same(Object.keys((detectLanguageTool.output as unknown as Record<string, any>).properties), [
    'language_code',
    'language_name',
    'confidence',
  ]);
});

t.test('POST /v1/language/detect answers code, name and confidence', async (t) => {
  const app = await buildTestApp(t, { tools: [detectLanguageTool] });
  const cases: [string, string, string][] = [
    ['La réunion du conseil municipal aura lieu jeudi soir à la mairie.', 'fr', 'French'],
    ['नगर निगम की बैठक गुरुवार शाम को टाउन हॉल में होगी।', 'hi', 'Hindi'],
    ['ನಗರಸಭೆಯ ಸಭೆ ಗುರುವಾರ ಸಂಜೆ ಟೌನ್ ಹಾಲ್‌ನಲ್ಲಿ ನಡೆಯಲಿದೆ.', 'kn', 'Kannada'],
    ['市議会の会議は木曜日の夜に市役所で開かれます。', 'ja', 'Japanese'],
  ];
  for (const [text, code, name] of cases) {
    const res = await app.inject({ method: 'POST', url: URL, payload: { text } });
    t.equal(res.statusCode, 200);
    const body = res.json();
    t.same(Object.keys(body), ['language_code', 'language_name', 'confidence']);
    t.equal(body.language_code, code);
    t.equal(body.language_name, name);
    t.ok(body.confidence > 0.5 && body.confidence <= 1, `confidence ${body.confidence}`);
  }
  const short = await app.inject({ method: 'POST', url: URL, payload: { text: 'hi there' } });
  t.same(short.json(), { language_code: 'en', language_name: 'English', confidence: 0.1 });

  // The largest accepted text: only its first 5,000 characters are read.
  const largest = 'Das ist ein Satz auf Deutsch. '.repeat(200) + 'x'.repeat(DETECT_LANGUAGE_MAX_CHARS - 6000);
  const big = await app.inject({ method: 'POST', url: URL, payload: { text: largest } });
  t.equal(big.statusCode, 200);
  t.equal(big.json().language_code, 'de');
});

t.test('invalid input is a VALIDATION_ERROR naming the field', async (t) => {
  const app = await buildTestApp(t, { tools: [detectLanguageTool] });
  const cases: [unknown, RegExp][] = [
    [{}, /text is required/],
    [{ text: '' }, /text must not have fewer than 1 characters/],
    [{ text: 'x'.repeat(DETECT_LANGUAGE_MAX_CHARS + 1) }, /text must not have more than 100000 characters/],
    [{ text: 42 }, /text must be string/],
  ];
  for (const [payload, message] of cases) {
    const res = await app.inject({ method: 'POST', url: URL, payload: payload as object });
    t.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 40));
    const body = res.json();
    t.equal(body.code, 'VALIDATION_ERROR');
    t.match(body.error, message);
  }
});
