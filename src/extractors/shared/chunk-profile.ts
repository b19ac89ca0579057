/**
 * A kind's chunking profile (size and overlap in chars before length scaling, and the separators
 * tried in order; src/retrieval/chunking.ts applies it). Each format's descriptor names its own,
 * built from these separator lists so that kinds that chunk alike stay alike.
 */
export interface ChunkProfile {
  size: number;
  overlap: number;
  separators: readonly string[];
}

export const SENTENCE: readonly string[] = ['. ', '? ', '! ', '; ', ', ', ' ', ''];
export const HEADINGS: readonly string[] = ['\n# ', '\n## ', '\n### ', '\n#### '];
/** Paragraphs, lines, then the cells of a pipe-table row. */
export const TABLE_ROWS: readonly string[] = ['\n\n', '\n', ' | ', ' ', ''];

/** Markdown-ish prose: headings first, then paragraphs, lines and sentences. */
export const PROSE: readonly string[] = [...HEADINGS, '\n\n', '\n', ...SENTENCE];

/** Text of no particular layout (plain text, OCR'd images), and any kind without a profile. */
export const DEFAULT_CHUNKING: ChunkProfile = { size: 1200, overlap: 250, separators: PROSE };
