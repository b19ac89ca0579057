/**
 * Decode-size limits of the text-like extractors (HTML, CSV, text, URLs), in one place with the
 * reason for each value. They bound work before memory is committed, so that a small hostile file
 * cannot cost super-linear time or unbounded memory. The ones a user may need to raise are
 * configurable (src/config.ts) and travel in ExtractInput.limits as plain numbers (the input
 * crosses a process boundary, see types.ts); the rest are fixed here.
 */

export interface ExtractLimits {
  /**
   * Elements (start tags plus the clones the HTML parser makes when it re-opens unclosed
   * formatting elements) we build a DOM for. jsdom needs about 3 KB of heap per element all-in; at
   * 100,000 that is ~300 MB, and the largest ordinary pages (long Wikipedia articles) have 30-60k.
   * Beyond it the page is read as plain text by a linear scan (structure and tables dropped,
   * metadata.extraction_method 'plain_text') rather than refused: the words are still worth having.
   */
  htmlMaxElements: number;
  /**
   * Columns kept per CSV row. Excel stops at 16,384; a table wider than 2,000 columns is not
   * readable as a table, and the header and typing steps cost grows with width. Extra columns are
   * dropped and reported (metadata.truncated_columns).
   */
  csvMaxColumns: number;
  /**
   * Characters of a plain text / Markdown / JSON / XML document kept. 20 million characters is a
   * 3,000-page book; beyond that the chunk index and its embeddings, not the file, are the cost.
   * The rest is cut and flagged (metadata.truncated).
   */
  textMaxChars: number;
}

export const DEFAULT_EXTRACT_LIMITS: Readonly<ExtractLimits> = Object.freeze({
  htmlMaxElements: 100_000,
  csvMaxColumns: 2_000,
  textMaxChars: 20_000_000,
});

/** Limits for one extraction: the given ones where set and valid, else the defaults. */
export function resolveLimits(given?: Partial<ExtractLimits>): ExtractLimits {
  const pick = (v: number | undefined, d: number): number => (typeof v === 'number' && Number.isFinite(v) && v >= 1 ? Math.floor(v) : d);
  return {
    htmlMaxElements: pick(given?.htmlMaxElements, DEFAULT_EXTRACT_LIMITS.htmlMaxElements),
    csvMaxColumns: pick(given?.csvMaxColumns, DEFAULT_EXTRACT_LIMITS.csvMaxColumns),
    textMaxChars: pick(given?.textMaxChars, DEFAULT_EXTRACT_LIMITS.textMaxChars),
  };
}

/** The configurable limits from Config (HTML_MAX_ELEMENTS, CSV_MAX_COLUMNS, TEXT_MAX_CHARS). */
export function extractLimitsFromConfig(config: {
  HTML_MAX_ELEMENTS: number;
  CSV_MAX_COLUMNS: number;
  TEXT_MAX_CHARS: number;
}): ExtractLimits {
  return resolveLimits({
    htmlMaxElements: config.HTML_MAX_ELEMENTS,
    csvMaxColumns: config.CSV_MAX_COLUMNS,
    textMaxChars: config.TEXT_MAX_CHARS,
  });
}

/**
 * Element nesting the HTML parser sees. Chrome's parser flattens past 512 and so do we: deeper
 * start tags are dropped before parsing (their content stays, as siblings), which keeps jsdom's
 * recursive algorithms (cloning, serialising) and the tree-builder's scope searches bounded.
 */
export const HTML_MAX_DEPTH = 512;

/**
 * Formatting elements (b, i, font, code...) open at once. The HTML parser re-opens every one of
 * them after each block boundary (the "reconstruct the active formatting elements" step), so N
 * distinct unclosed ones cost N elements per paragraph: quadratic. Real pages rarely have more
 * than 4-5 open; beyond 10 further start tags (and their end tags) are dropped. `<a>` is never
 * dropped: at most one is ever open, and its target matters.
 */
export const HTML_MAX_OPEN_FORMATTING = 10;

/**
 * Average depth per element the DOM budget allows (the budget on HtmlShape.depthSum is
 * htmlMaxElements x this). jsdom's insertion walks the ancestors, so 20,000 list items nested 512
 * deep cost as much as 10 million shallow elements. Ordinary pages average 10-20.
 */
export const HTML_DEPTH_PER_ELEMENT = 32;

/** Start and end tags together; a page has about one end tag per start tag, so 4x the elements. */
export const HTML_TAGS_PER_ELEMENT = 4;

/**
 * Readability rewrites the DOM through jsdom's live collections, which costs the square of an
 * element's child count and the product of element count and depth. It is skipped (the plain body
 * walk is used) past any of these. Ordinary pages measured: Wikipedia 5,300 elements, 300 children
 * at most under one element, depth 30.
 */
export const READABILITY_MAX_ELEMENTS = 60_000;
export const READABILITY_MAX_CHILDREN = 1_000;
export const READABILITY_MAX_DEPTH = 128;
/** Readability's per-element subtree queries make its cost follow HtmlShape.depthSum (Wikipedia: 82,000). */
export const READABILITY_MAX_DEPTH_SUM = 500_000;

/**
 * One table's grid (HTML and DOCX tables, after colspan/rowspan are spread): a `colspan=1000`
 * cell is a few bytes of source, so width and cell count are capped. 1,000 columns is wider than
 * any table a reader can use; a million cells is ~50 MB of strings.
 */
export const TABLE_MAX_COLUMNS = 1_000;
export const TABLE_MAX_CELLS = 1_000_000;

/** Longest URL taken from text: 8 KiB is past every browser's and server's practical limit. */
export const URL_MAX_CHARS = 8_192;

/** HTML hyperlinks kept in urls[] (the first ones, in page order); the full count is reported. */
export const HTML_MAX_LINKS = 5_000;

/**
 * Characters kept of one CSV field. Excel's own cell limit is 32,767; a longer field is prose or a
 * broken quote, and rows are searched and rendered cell by cell. The cut is flagged
 * (metadata.truncated_fields).
 */
export const CSV_MAX_FIELD_CHARS = 32_767;
