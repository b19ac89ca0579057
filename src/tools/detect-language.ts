/** detect_language: the language of a text, as an ISO 639-1 code, its name and a confidence. */
import Type from 'typebox';
import { defineTool } from './define-tool.ts';
import { DETECTION_WINDOW_CHARS, MIN_TEXT_CHARS } from '../language/limits.ts';
import { SUPPORTED_LANGUAGES } from '../language/languages.ts';
import { thousands } from '../util/thousands.ts';

export const DETECT_LANGUAGE_MAX_CHARS = 100_000;

let detectModule: Promise<typeof import('../language/detect.ts')> | undefined;
/** The module's detectLanguage once loaded: later calls use it without awaiting the import's promise. */
let detectLoaded: (typeof import('../language/detect.ts'))['detectLanguage'] | undefined;

const Input = Type.Object(
  {
    text: Type.String({
      minLength: 1,
      maxLength: DETECT_LANGUAGE_MAX_CHARS,
      description:
        `Text to identify (1 to ${thousands(DETECT_LANGUAGE_MAX_CHARS)} characters). Only the first ` +
        `${thousands(DETECTION_WINDOW_CHARS)} characters are read.`,
    }),
  },
  { additionalProperties: false },
);

const Output = Type.Object(
  {
    language_code: Type.String({ description: 'ISO 639-1 code, e.g. "en", "hi", "zh"', minLength: 2, maxLength: 2 }),
    language_name: Type.String({ description: 'English name of the language, e.g. "Hindi"' }),
    confidence: Type.Number({
      minimum: 0,
      maximum: 1,
      description: '0 to 1; below 0.5 the text gave little evidence (very short, mixed or without letters)',
    }),
  },
  { additionalProperties: false },
);

export const detectLanguageTool = defineTool({
  name: 'detect_language',
  title: 'Detect language',
  description:
    'Identify the language of a text. Returns the ISO 639-1 code, the language name and a confidence. ' +
    `Covers ${SUPPORTED_LANGUAGES.length} languages, among them English, Spanish, French, German, Italian, Portuguese, Dutch, Russian, ` +
    'Arabic, Urdu, Hindi, Marathi, Bengali, Telugu, Tamil, Malayalam, Kannada, Gujarati, Punjabi, Chinese, ' +
    `Japanese and Korean. The first ${thousands(DETECTION_WINDOW_CHARS)} characters are read; longer ` +
    `texts are judged by a majority vote of their beginning, middle and end. Texts under ${MIN_TEXT_CHARS} ` +
    'characters are reported as English with low confidence.',
  group: 'utility',
  input: Input,
  output: Output,
  timeoutClass: 'utility',
  rest: { method: 'POST', path: '/v1/language/detect' },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: { action: 'search', what: 'detect languages' },
  examples: [
    { name: 'french', summary: 'A French sentence', value: { text: 'Ceci est un petit texte en français pour montrer la détection de la langue.' } },
    { name: 'hindi', summary: 'A Hindi sentence', value: { text: 'यह भाषा पहचान का एक छोटा सा उदाहरण है।' } },
  ],
  async handler(input) {
    if (detectLoaded) return detectLoaded(input.text);
    // The n-gram model loads on the first call (or when the server warms up after listen); the
    // function is kept, since a dynamic import per call costs a module-map lookup and two promises.
    const { detectLanguage } = await (detectModule ??= import('../language/detect.ts').catch((err: unknown) => {
      detectModule = undefined;
      throw err;
    }));
    detectLoaded = detectLanguage;
    return detectLanguage(input.text);
  },
});
