/**
 * English stop words. LUCENE is the classic 33-word list of Lucene's English analyzer; EXTENDED adds
 * the frequent function words (pronouns, auxiliaries, prepositions) that carry no topical signal.
 * Negations ("no", "not", "nor") are kept out of EXTENDED's additions on purpose: they are rare enough
 * in queries to matter and cost little.
 */
export const LUCENE_STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no',
  'not', 'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this',
  'to', 'was', 'will', 'with',
]);

export const EXTENDED_STOP_WORDS: ReadonlySet<string> = new Set([
  ...LUCENE_STOP_WORDS,
  'about', 'above', 'after', 'again', 'against', 'all', 'am', 'any', 'because', 'been', 'before',
  'being', 'below', 'between', 'both', 'can', 'could', 'did', 'do', 'does', 'doing', 'down', 'during',
  'each', 'few', 'from', 'further', 'had', 'has', 'have', 'having', 'he', 'her', 'here', 'hers',
  'herself', 'him', 'himself', 'his', 'how', 'i', 'its', 'itself', 'just', 'me', 'more', 'most', 'my',
  'myself', 'nor', 'now', 'off', 'once', 'only', 'other', 'our', 'ours', 'ourselves', 'out', 'over',
  'own', 's', 'same', 'she', 'should', 'so', 'some', 'than', 'theirs', 'them', 'themselves', 'those',
  'through', 't', 'too', 'under', 'until', 'up', 'very', 'we', 'were', 'what', 'when', 'where',
  'which', 'while', 'who', 'whom', 'why', 'would', 'you', 'your', 'yours', 'yourself', 'yourselves',
  'also', 'may', 'might', 'must', 'shall', 'upon', 'via', 'whether', 'within', 'without', 'yet',
]);

export type StopWordList = 'none' | 'lucene' | 'extended';

export function stopWordSet(list: StopWordList): ReadonlySet<string> | null {
  if (list === 'lucene') return LUCENE_STOP_WORDS;
  if (list === 'extended') return EXTENDED_STOP_WORDS;
  return null;
}
