/**
 * Generated prose for the chunking and retrieval tests: a sectioned Markdown handbook with one
 * planted sentence per section, a short multilingual declaration, and a long book. Deterministic
 * (a fixed linear congruential generator), so every run sees the same text.
 */

const VOCABULARY = (
  'system record access policy audit change review owner report request table index query user ' +
  'group profile library object journal backup storage network service schedule program module ' +
  'option value limit level default history process method result summary detail section topic'
).split(' ');

/**
 * About 1,900 made-up words (two or three syllables): with them, passages differ in vocabulary as
 * real prose does, so no two chunks look like near-duplicates to the diversity filter.
 */
const SYLLABLES = 'ka lo mi su te ra ne po vi du ze ga'.split(' ');
const RARE_WORDS = [
  ...SYLLABLES.flatMap((a) => SYLLABLES.map((b) => a + b)),
  ...SYLLABLES.flatMap((a) => SYLLABLES.flatMap((b) => SYLLABLES.map((c) => a + b + c))),
];

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** `sentences` sentences of filler words (half common, half made-up), different for every seed. */
export function filler(seed: number, sentences = 5): string {
  const next = random(seed * 7919 + 13);
  const out: string[] = [];
  for (let s = 0; s < sentences; s++) {
    const n = 10 + Math.floor(next() * 8);
    const words = Array.from({ length: n }, () =>
      next() < 0.5 ? VOCABULARY[Math.floor(next() * VOCABULARY.length)]! : RARE_WORDS[Math.floor(next() * RARE_WORDS.length)]!,
    );
    words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
    out.push(`${words.join(' ')}.`);
  }
  return out.join(' ');
}

export interface HandbookSection {
  heading: string;
  /** Heading path of the section (titles without the leading #). */
  path: string[];
  /** The one sentence in the handbook that carries this section's distinctive words. */
  planted: string;
}

const TITLE = 'Database Security Handbook';

/** Sections in order; each `planted` sentence occurs exactly once, in the middle of its section. */
export const HANDBOOK_SECTIONS: readonly HandbookSection[] = [
  { heading: '## 1 Introduction', path: [TITLE, '1 Introduction'], planted: 'This handbook explains how the kestrel platform protects stored records.' },
  { heading: '## 2 Roles', path: [TITLE, '2 Roles'], planted: 'Every role is granted through a named authority list.' },
  {
    heading: '### 2.1 Separation of duties',
    path: [TITLE, '2 Roles', '2.1 Separation of duties'],
    planted: 'Separation of duties means the security administrator never approves their own changes.',
  },
  {
    heading: '### 2.2 Function usage identifiers',
    path: [TITLE, '2 Roles', '2.2 Function usage identifiers'],
    planted: 'The function usage identifier QIBM_DB_SECADM grants the right to manage permissions and masks.',
  },
  { heading: '## 3 Row and column access control', path: [TITLE, '3 Row and column access control'], planted: 'RCAC combines row permissions with column masks.' },
  {
    heading: '### 3.1 Row permissions',
    path: [TITLE, '3 Row and column access control', '3.1 Row permissions'],
    planted: 'A row permission is a search condition that filters which rows a user may read.',
  },
  {
    heading: '### 3.2 Column masks',
    path: [TITLE, '3 Row and column access control', '3.2 Column masks'],
    planted: 'A column mask rewrites the value of a sensitive column, for example showing only the last four digits.',
  },
  { heading: '## 4 Auditing', path: [TITLE, '4 Auditing'], planted: 'Audit journal entries record who changed which permission and when.' },
];

/** About 25,000 characters of Markdown: a title, then every section with six filler paragraphs around its planted sentence. */
export function handbookMarkdown(): string {
  const parts = [`# ${TITLE}`, filler(1, 3)];
  HANDBOOK_SECTIONS.forEach((s, i) => {
    parts.push(s.heading);
    for (let p = 0; p < 6; p++) {
      parts.push(p === 3 ? `${filler(100 * (i + 1) + p, 2)} ${s.planted} ${filler(100 * (i + 1) + p + 50, 2)}` : filler(100 * (i + 1) + p));
    }
  });
  return parts.join('\n\n') + '\n';
}

/** A short plain-text declaration in several languages (article 1 of the UDHR, public domain). */
export function declarationText(): string {
  return [
    'Universal Declaration of Human Rights, Article 1',
    '',
    'English: All human beings are born free and equal in dignity and rights. They are endowed with reason and conscience and should act towards one another in a spirit of brotherhood.',
    '',
    'Français: Tous les êtres humains naissent libres et égaux en dignité et en droits. Ils sont doués de raison et de conscience et doivent agir les uns envers les autres dans un esprit de fraternité.',
    '',
    'Español: Todos los seres humanos nacen libres e iguales en dignidad y derechos y, dotados como están de razón y conciencia, deben comportarse fraternalmente los unos con los otros.',
    '',
    'Deutsch: Alle Menschen sind frei und gleich an Würde und Rechten geboren. Sie sind mit Vernunft und Gewissen begabt und sollen einander im Geist der Brüderlichkeit begegnen.',
    '',
  ].join('\n');
}

/** Hard-wraps prose at `width` columns, as plain-text e-books are. */
function wrap(text: string, width = 72): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join('\n');
}

/**
 * A long book (about 300,000 characters), hard-wrapped at 72 columns: chapters with a heading line,
 * paragraphs of varying length separated by blank lines, some single paragraphs longer than a
 * chunk, and dialogue lines.
 */
export function longBook(chapters = 40): string {
  const parts: string[] = ['THE LONG FIXTURE BOOK', '', 'A generated novel for chunking tests.', ''];
  for (let c = 1; c <= chapters; c++) {
    parts.push(`CHAPTER ${c}`, '');
    for (let p = 0; p < 40; p++) {
      const seed = c * 1000 + p;
      // One paragraph per chapter runs long (more than one chunk), every third is a line of
      // dialogue, the others are short (one or two sentences), as in a novel.
      if (p === 20) parts.push(wrap(filler(seed, 30)));
      else if (p % 3 === 0) parts.push(wrap(`"${filler(seed, 1)}" said the ${VOCABULARY[seed % VOCABULARY.length]} keeper.`));
      else parts.push(wrap(filler(seed, 1 + (seed % 2))));
      parts.push('');
    }
  }
  return parts.join('\n');
}
