/**
 * Language detection for short texts and whole documents.
 *
 * How a text is decided:
 * - Under 10 characters (after trimming) it is too short to judge: "en" with low confidence.
 * - Only the first 5,000 characters are read. Long enough texts are cut into three samples
 *   (beginning, middle, end of that window) and the samples vote; the majority wins, so a
 *   boilerplate header or an appendix in another language does not decide a document alone.
 * - Each sample is decided by its dominant Unicode script when one language owns that script
 *   (Tamil, Hangul, Gujarati, ...; kana make Japanese, Han alone Chinese). For the shared scripts
 *   the statistical detector (eld, n-grams of 60 languages) ranks the languages of that script,
 *   helped by orthographic rules (script-rules.ts) that settle hi/mr/ne and ur/ar from letters and
 *   function words.
 *
 * Detection is synchronous and costs well under a millisecond for 5,000 characters. The eld model
 * (a 1.6 MB n-gram table) is loaded once per process and never reconfigured, but not at import:
 * compiling and evaluating it was the largest single cost of a server's start (and of every test
 * file and extraction child that never detects). The HTTP and stdio servers warm it up
 * (warmLanguageModel) once they answer; a detection that comes first loads it synchronously, so
 * it is always answered with the same model (src/language/eld-model.ts says how it is read).
 */
import { languageScorer } from './eld-model.ts';
import { languageName } from './languages.ts';
import { countScripts, dominantScript, SINGLE_LANGUAGE_SCRIPTS } from './scripts.ts';
import { arabicScriptByLetters, cyrillicAllowed, devanagariByCues, SCRIPT_CANDIDATES } from './script-rules.ts';

export interface LanguageDetection {
  /** ISO 639-1 code, e.g. "en", "hi", "zh". */
  language_code: string;
  /** English name of the language, e.g. "Hindi". */
  language_name: string;
  /** 0..1; below 0.5 means the text gave little evidence (very short, mixed, or no letters). */
  confidence: number;
}

import { DETECTION_WINDOW_CHARS, MIN_TEXT_CHARS } from './limits.ts';

export { DETECTION_WINDOW_CHARS, MIN_TEXT_CHARS };
/** Windows shorter than this are judged as one sample: thirds of a short paragraph say less than the whole. */
export const SPLIT_THRESHOLD_CHARS = 600;
export const SAMPLE_COUNT = 3;
/**
 * A sample is judged on at most 1,000 characters (eld reads no more), which bounds the cost: the
 * head of the first third, the centre of the middle one and the tail of the last one.
 */
export const MAX_SAMPLE_CHARS = 1000;

const DEFAULT_LANGUAGE = 'en';
const SHORT_TEXT_CONFIDENCE = 0.1;

export interface SampleDecision {
  language: string;
  confidence: number;
}

const URLS_AND_EMAILS = /\b(?:https?:\/\/|www\.)\S+|[\w.+-]+@[\w-]+\.[\w.-]+/giu;

/** Decides one sample; undefined when it has no letters to judge (numbers, symbols, markup). */
export function detectSample(sample: string): SampleDecision | undefined {
  const head = sample.length > MAX_SAMPLE_CHARS ? excerpt(sample, 0) : sample;
  const text = /@|:\/\/|www\./i.test(head) ? head.replace(URLS_AND_EMAILS, ' ') : head;
  const census = countScripts(text);
  const dominant = dominantScript(census);
  if (dominant === undefined) return undefined;
  // Few letters or a mix of scripts lower the confidence of any decision.
  const evidence = dominant.share * Math.min(1, 0.5 + census.total / 60);

  const single = SINGLE_LANGUAGE_SCRIPTS[dominant.script];
  if (single !== undefined) return decision(single, 0.99 * evidence);
  if (dominant.script === 'Kana') return decision('ja', 0.99 * evidence);
  if (dominant.script === 'Han') return decision('zh', 0.95 * evidence);

  const candidates = SCRIPT_CANDIDATES[dominant.script];
  if (candidates === undefined) return undefined;

  if (dominant.script === 'Arabic') {
    const byLetters = arabicScriptByLetters(text);
    if (byLetters !== undefined) return decision(byLetters, 0.95 * evidence);
  }
  if (dominant.script === 'Devanagari') {
    const byCues = devanagariByCues(text);
    if (byCues !== undefined) return decision(byCues.language, (0.7 + 0.29 * byCues.strength) * evidence);
  }

  const ranked = rankCandidates(text, dominant.script, dominant.script === 'Cyrillic');
  if (ranked.length === 0) return decision(candidates[0], 0.2 * evidence);
  return decision(ranked[0].language, marginConfidence(ranked) * evidence);
}

/** Each shared script's candidates as indexes into the scorer's languages, in the scorer's order. */
let candidateIndexes: Map<string, Int32Array> | undefined;

function candidatesOf(script: string): Int32Array {
  const scorer = languageScorer();
  candidateIndexes ??= new Map(
    Object.entries(SCRIPT_CANDIDATES).map(([s, languages]) => [s, Int32Array.from(languages.map((l) => scorer.indexOf(l)).filter((i): i is number => i !== undefined)).sort()]),
  );
  return candidateIndexes.get(script)!;
}

/**
 * eld's scores for the candidate languages, best first (ties in eld's language order, as eld's
 * getScores() lists them): the same list getScores() then a filter gave, without its objects.
 */
function rankCandidates(text: string, script: string, cyrillic: boolean): { language: string; score: number }[] {
  const scorer = languageScorer();
  const scores = scorer.scores(text);
  const ranked: { language: string; score: number }[] = [];
  for (const l of candidatesOf(script)) {
    if (!(scores[l] > 0)) continue;
    const language = scorer.codes[l];
    if (cyrillic && !cyrillicAllowed(language, text)) continue;
    ranked.push({ language, score: scores[l] });
  }
  return ranked.sort((a, b) => b.score - a.score);
}

/**
 * eld scales each language's n-gram score g as g / (g + 25); undo that and compare the best two.
 * A runner-up at 75% or less of the winner is a clear decision.
 */
function marginConfidence(ranked: { score: number }[]): number {
  const raw = (s: number) => (s >= 1 ? Number.MAX_VALUE : (25 * s) / (1 - s));
  const best = raw(ranked[0].score);
  const second = ranked.length > 1 ? raw(ranked[1].score) : 0;
  const margin = best > 0 ? 1 - second / best : 0;
  return 0.5 + 0.49 * Math.min(1, margin / 0.25);
}

function decision(language: string, confidence: number): SampleDecision {
  return { language, confidence: Math.max(0, Math.min(1, confidence)) };
}

/** Cuts text into `count` consecutive parts, moving each cut back to a space when one is near. */
export function splitSamples(text: string, count: number = SAMPLE_COUNT): string[] {
  const samples: string[] = [];
  let start = 0;
  for (let i = 1; i <= count; i++) {
    let end = i === count ? text.length : Math.round((text.length * i) / count);
    if (i < count) {
      const space = text.lastIndexOf(' ', end);
      if (space > start && end - space < 50) end = space;
      else if (isLowSurrogate(text.charCodeAt(end))) end--; // never split a surrogate pair
    }
    samples.push(text.slice(start, end));
    start = end;
  }
  return samples;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * MAX_SAMPLE_CHARS of text starting at `start` (clamped so the excerpt fits), without a dangling
 * half of a surrogate pair at either end.
 */
function excerpt(text: string, start: number): string {
  let from = Math.max(0, Math.min(start, text.length - MAX_SAMPLE_CHARS));
  if (from > 0 && isLowSurrogate(text.charCodeAt(from))) from++;
  return leadingWindow(text.slice(from), MAX_SAMPLE_CHARS);
}

/** The leading `chars` UTF-16 units of text, without a dangling half of a surrogate pair. */
function leadingWindow(text: string, chars: number): string {
  if (text.length <= chars) return text;
  return text.slice(0, isLowSurrogate(text.charCodeAt(chars)) ? chars - 1 : chars);
}

function countCodePoints(text: string, limit: number): number {
  let n = 0;
  for (const _ of text) {
    if (++n >= limit) break;
  }
  return n;
}

function result(language: string, confidence: number): LanguageDetection {
  return {
    language_code: language,
    language_name: languageName(language),
    confidence: Math.round(confidence * 1000) / 1000,
  };
}

/** Detects the language of a text (a paragraph or a whole document). Never throws. */
export function detectLanguage(text: string): LanguageDetection {
  const trimmed = text.trim();
  if (countCodePoints(trimmed, MIN_TEXT_CHARS) < MIN_TEXT_CHARS) return result(DEFAULT_LANGUAGE, SHORT_TEXT_CONFIDENCE);

  const window = leadingWindow(trimmed, DETECTION_WINDOW_CHARS);
  const samples =
    window.length < SPLIT_THRESHOLD_CHARS
      ? [window]
      : splitSamples(window, SAMPLE_COUNT).map((part, i, all) =>
          // Beginning, middle and end of the window: the head, centre and tail of the thirds.
          excerpt(part, i === 0 ? 0 : i === all.length - 1 ? part.length : Math.floor((part.length - MAX_SAMPLE_CHARS) / 2)),
        );

  const votes = new Map<string, { votes: number; confidence: number }>();
  let voters = 0;
  for (const sample of samples) {
    const decided = detectSample(sample);
    if (decided === undefined) continue;
    voters++;
    const tally = votes.get(decided.language) ?? { votes: 0, confidence: 0 };
    tally.votes++;
    tally.confidence += decided.confidence;
    votes.set(decided.language, tally);
  }
  if (voters === 0) return result(DEFAULT_LANGUAGE, 0);

  // Majority of the samples that had letters; a three-way split goes to the most confident sample.
  let winner = '';
  let best = { votes: 0, confidence: 0 };
  for (const [language, tally] of votes) {
    if (tally.votes > best.votes || (tally.votes === best.votes && tally.confidence > best.confidence)) {
      winner = language;
      best = tally;
    }
  }
  return result(winner, best.confidence / voters);
}
