/**
 * The language a query is analyzed in, against an index whose documents have known languages.
 * A query is short, so its detection is often unsure: the detected language counts only when it is
 * confident and some document of the index is in it; otherwise the index's most common language
 * applies (a Russian collection reads "Путин 2004" as Russian). This is the fallback that
 * `npm run bench:languages` measures.
 */
import { detectLanguage } from '../language/detect.ts';

/** Below this detection confidence a query's own language is not trusted. */
export const QUERY_LANGUAGE_MIN_CONFIDENCE = 0.5;

/** Documents per language -> the query's language (undefined: the default, English, rules). */
export function queryLanguage(query: string, documentLanguages: Readonly<Record<string, number>>): string | undefined {
  // Documents in one language: that is the answer whatever the detection says (detected and
  // present, or the most common), so the detection (~0.4 ms, at every search) is skipped.
  const languages = Object.keys(documentLanguages).filter((l) => (documentLanguages[l] ?? 0) > 0);
  if (languages.length === 1) return languages[0];
  const d = detectLanguage(query);
  if (d.confidence >= QUERY_LANGUAGE_MIN_CONFIDENCE && (documentLanguages[d.language_code] ?? 0) > 0) return d.language_code;
  let best: string | undefined;
  let most = 0;
  for (const [language, n] of Object.entries(documentLanguages)) {
    if (n > most || (n === most && best !== undefined && language < best)) {
      best = language;
      most = n;
    }
  }
  return best;
}
