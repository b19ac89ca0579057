/**
 * The detector's input limits, apart from detect.ts so that tool declarations can quote them
 * without loading the n-gram model (eld takes most of a second to load).
 */

/** Texts shorter than this (in characters, after trimming) are reported as English. */
export const MIN_TEXT_CHARS = 10;
/** Only this many leading characters are examined. */
export const DETECTION_WINDOW_CHARS = 5000;
