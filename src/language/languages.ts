/** The languages (ISO 639-1) the detector can report, with their English names. */
export const LANGUAGE_NAMES: Readonly<Record<string, string>> = Object.freeze({
  am: 'Amharic', ar: 'Arabic', az: 'Azerbaijani', be: 'Belarusian', bg: 'Bulgarian',
  bn: 'Bengali', ca: 'Catalan', cs: 'Czech', da: 'Danish', de: 'German', el: 'Greek', en: 'English',
  es: 'Spanish', et: 'Estonian', eu: 'Basque', fa: 'Persian', fi: 'Finnish', fr: 'French',
  gu: 'Gujarati', he: 'Hebrew', hi: 'Hindi', hr: 'Croatian', hu: 'Hungarian', hy: 'Armenian',
  is: 'Icelandic', it: 'Italian', ja: 'Japanese', ka: 'Georgian',
  km: 'Khmer', kn: 'Kannada', ko: 'Korean', ku: 'Kurdish', lo: 'Lao', lt: 'Lithuanian', lv: 'Latvian',
  ml: 'Malayalam', mr: 'Marathi', ms: 'Malay', my: 'Burmese', ne: 'Nepali', nl: 'Dutch',
  no: 'Norwegian', or: 'Odia', pa: 'Punjabi', pl: 'Polish', pt: 'Portuguese', ro: 'Romanian',
  ru: 'Russian', si: 'Sinhala', sk: 'Slovak', sl: 'Slovenian', sq: 'Albanian',
  sr: 'Serbian', sv: 'Swedish', ta: 'Tamil', te: 'Telugu', th: 'Thai', tl: 'Tagalog',
  tr: 'Turkish', uk: 'Ukrainian', ur: 'Urdu', vi: 'Vietnamese', yo: 'Yoruba',
  zh: 'Chinese',
});

/** The languages the product promises to recognise; the evaluation reports them separately. */
export const REQUIRED_LANGUAGES = Object.freeze([
  'en', 'es', 'fr', 'de', 'it', 'pt', 'hi', 'bn', 'te', 'ta', 'mr', 'ml', 'kn', 'gu', 'pa', 'ur',
  'zh', 'ja', 'ko', 'ru', 'ar', 'nl',
] as const);

/** Every code detectLanguage may return. */
export const SUPPORTED_LANGUAGES: readonly string[] = Object.freeze(Object.keys(LANGUAGE_NAMES));

export function languageName(code: string): string {
  return LANGUAGE_NAMES[code] ?? code;
}
