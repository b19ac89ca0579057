/**
 * Generated chunk texts for the lexical scale benchmark (kb-scale.bench.ts) and the pruning test
 * (test/kb/lexical-pruning.test.ts): SciFact-like sentences (biomedical nouns, verbs and modifiers
 * in a few sentence shapes, numbers and gene-like tokens, Zipf-distributed word choice) and a
 * plain Zipf vocabulary of random words. Seeded: the same seed gives the same texts.
 */

/** A seeded generator in [0, 1) (LCG; fast, and good enough for picking words). */
export function lcg(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** Picks index i of n with probability ~ 1 / (i + 1)^s (inverse CDF over a precomputed table). */
export function zipfPicker(n: number, s: number, r: () => number): () => number {
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let i = 0; i < n; i++) cdf[i] = acc += 1 / Math.pow(i + 1, s);
  for (let i = 0; i < n; i++) cdf[i] /= acc;
  return () => {
    const x = r();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const CONSONANTS = 'bcdfghjklmnprstvwz';
const VOWELS = 'aeiou';

/** `n` distinct pronounceable random words (letters only), seeded. */
export function randomVocabulary(n: number, seed: number): string[] {
  const r = lcg(seed);
  const seen = new Set<string>();
  while (seen.size < n) {
    let w = '';
    const syl = 2 + Math.floor(r() * 3);
    for (let i = 0; i < syl; i++) w += CONSONANTS[Math.floor(r() * CONSONANTS.length)] + VOWELS[Math.floor(r() * VOWELS.length)];
    if (r() < 0.3) w += CONSONANTS[Math.floor(r() * CONSONANTS.length)];
    seen.add(w);
  }
  return [...seen];
}

const NOUNS = (
  'cell cells protein expression patients mice tumor cancer gene genes receptor activity levels risk ' +
  'treatment therapy response disease infection mutation pathway signaling inflammation apoptosis ' +
  'tissue blood plasma serum insulin glucose obesity diabetes mortality cohort trial outcome dose ' +
  'antibody antigen virus bacteria immune macrophages lymphocytes neurons brain liver kidney heart ' +
  'vaccine drug inhibitor kinase enzyme membrane mitochondria dna rna transcription methylation ' +
  'chromatin stem differentiation proliferation migration metastasis survival incidence prevalence ' +
  'hypertension stroke cholesterol lipid metabolism oxidative stress hypoxia angiogenesis fibrosis ' +
  'autophagy cytokine interleukin interferon tnf nf-kb p53 brca1 egfr hiv tuberculosis malaria ' +
  'pregnancy infants children adults women men elderly smoking alcohol exercise diet vitamin calcium'
).split(' ');
const VERBS = (
  'increases reduces induces inhibits promotes regulates activates suppresses mediates enhances ' +
  'decreases prevents impairs restores correlates associates predicts modulates triggers blocks'
).split(' ');
const ADJ = (
  'significant higher lower chronic acute severe early late human murine clinical systemic local ' +
  'novel common rare elevated reduced increased decreased resistant sensitive primary secondary'
).split(' ');
const SHAPES = [
  'The {adj} {noun} {verb} {noun} in {noun}.',
  '{noun} {verb} the {noun} of {adj} {noun} through {noun} {noun}.',
  'In a cohort of {num} {noun}, {noun} was associated with {adj} {noun} and {noun}.',
  '{adj} {noun} of {gene} {verb} {noun} {noun} by {num}%.',
  'These results suggest that {noun} {verb} {noun} {noun} in {adj} {noun}.',
  'Loss of {gene} {verb} {noun} and {verb} {adj} {noun} of {noun}.',
  'We found no {adj} difference in {noun} between {noun} and {noun} ({num} vs {num}).',
];

/**
 * A SciFact-like chunk maker: `next()` gives a text of 1-4 sentences. Each slot's word is picked
 * with Zipf weights over its list plus a long tail of random words, so the vocabulary keeps
 * growing with the collection, as a real corpus's does.
 */
export function sciFactLike(seed: number): { next: () => string; query: () => string } {
  const r = lcg(seed);
  const tail = randomVocabulary(60_000, seed + 7);
  const pickNoun = zipfPicker(NOUNS.length, 0.9, r);
  const pickTail = zipfPicker(tail.length, 1.05, r);
  const pickVerb = zipfPicker(VERBS.length, 0.8, r);
  const pickAdj = zipfPicker(ADJ.length, 0.8, r);
  const noun = () => (r() < 0.35 ? tail[pickTail()] : NOUNS[pickNoun()]);
  const gene = () => `${CONSONANTS[Math.floor(r() * 18)].toUpperCase()}${VOWELS[Math.floor(r() * 5)].toUpperCase()}${1 + Math.floor(r() * 40)}`;
  const fill = (shape: string) =>
    shape.replace(/\{(\w+)\}/g, (_, k: string) =>
      k === 'noun' ? noun() : k === 'verb' ? VERBS[pickVerb()] : k === 'adj' ? ADJ[pickAdj()] : k === 'gene' ? gene() : String(Math.floor(r() * 500)),
    );
  return {
    next: () => {
      const n = 1 + Math.floor(r() * 4);
      let out = '';
      for (let i = 0; i < n; i++) out += (i ? ' ' : '') + fill(SHAPES[Math.floor(r() * SHAPES.length)]);
      return out;
    },
    // A claim, as SciFact's queries are: one sentence.
    query: () => fill(SHAPES[Math.floor(r() * SHAPES.length)]),
  };
}
