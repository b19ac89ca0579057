/**
 * Bytes -> text for every text-like format (CSV/TSV, plain text, Markdown, JSON, XML, HTML).
 *
 * Order of evidence, strongest first: a byte-order mark, the charset the server declared, the NUL
 * pattern of UTF-16 without a BOM, the bytes being valid UTF-8, a strict Shift-JIS structure check
 * (chardet is unreliable on short Japanese samples), chardet for other multi-byte CJK encodings,
 * then cp1252 (a superset of Latin-1 that also covers "smart quotes"). Bytes that look like binary
 * decode as UTF-8 with replacement characters rather than as mojibake.
 */
import chardet from 'chardet';
import iconv from 'iconv-lite';
import { bomOf } from './signatures.ts';

export interface DecodedText {
  text: string;
  /** Canonical lower-case name of the encoding that was used, e.g. 'utf-8', 'utf-16le', 'shift_jis'. */
  encoding: string;
  /** Set when `maxChars` cut the text (the rest of the bytes was never decoded). */
  truncated?: boolean;
}

export interface DecodeOptions {
  contentType?: string;
  /**
   * Decode at most this many characters. Bytes are decoded in steps of at most the characters
   * still wanted (a character is at least one byte), so no more than that is ever allocated, and
   * the encoding checks look at the decoded prefix only.
   */
  maxChars?: number;
}

type ChunkDecoder = (chunk: Buffer, last: boolean) => string;

/** Decodes a prefix of `bytes` of at most maxChars characters; null when the decoder throws. */
function decodeBounded(bytes: Buffer, maxChars: number, decoder: ChunkDecoder): { text: string; truncated: boolean } | null {
  const parts: string[] = [];
  let len = 0;
  let off = 0;
  try {
    while (off < bytes.length && len < maxChars) {
      const end = Math.min(bytes.length, off + Math.max(4, maxChars - len));
      const piece = decoder(bytes.subarray(off, end), end >= bytes.length);
      parts.push(piece);
      len += piece.length;
      off = end;
    }
  } catch {
    return null;
  }
  const text = parts.join('');
  return { text: text.length > maxChars ? text.slice(0, maxChars) : text, truncated: off < bytes.length || text.length > maxChars };
}

function utf8Decoder(fatal: boolean): ChunkDecoder {
  const d = new TextDecoder('utf-8', { fatal, ignoreBOM: true });
  return (chunk, last) => d.decode(chunk, { stream: !last });
}

function iconvDecoder(encoding: string): ChunkDecoder {
  const d = iconv.getDecoder(encoding);
  return (chunk, last) => {
    const s = d.write(chunk);
    return last ? s + (d.end() ?? '') : s;
  };
}

/** Bytes inspected by the statistical checks; enough for a stable verdict, cheap on large files. */
const SAMPLE_BYTES = 64 * 1024;
/** chardet confidence (0-100) needed before trusting it over the Latin fallback. */
const CHARDET_MIN_CONFIDENCE = 50;
const CJK_MULTIBYTE = new Set(['shift_jis', 'euc-jp', 'gb18030', 'big5', 'euc-kr', 'iso-2022-jp']);

export function decodeText(bytes: Buffer, opts: DecodeOptions = {}): DecodedText {
  // Fewer bytes than the limit cannot decode to more characters: the unbounded path, unchanged.
  if (opts.maxChars !== undefined && bytes.length > opts.maxChars) return decodeTextBounded(bytes, opts.contentType, opts.maxChars);
  const bom = decodeByBom(bytes);
  if (bom) return bom;

  const declared = charsetFromContentType(opts.contentType);
  if (declared) {
    if (isUtf8Name(declared)) {
      const text = tryUtf8(bytes);
      // A server that says UTF-8 but sends something else is common; fall through to sniffing.
      if (text !== null) return { text, encoding: 'utf-8' };
    } else if (iconv.encodingExists(declared)) {
      return { text: iconv.decode(bytes, declared), encoding: declared.toLowerCase() };
    }
  }

  // Before the UTF-8 check: ASCII in UTF-16 is also valid UTF-8 (NUL is a valid code point).
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  const utf16 = sniffUtf16(sample);
  if (utf16) return { text: iconv.decode(bytes, utf16), encoding: utf16 };

  const utf8 = tryUtf8(bytes);
  if (utf8 !== null) return { text: utf8, encoding: 'utf-8' };

  if (looksBinary(sample)) {
    return { text: bytes.toString('utf8'), encoding: 'utf-8' };
  }

  if (looksLikeShiftJis(sample)) {
    // cp932 is the Windows superset of Shift-JIS (NEC/IBM extensions such as 髙).
    return { text: iconv.decode(bytes, 'cp932'), encoding: 'shift_jis' };
  }

  const guess = chardet.analyse(sample)[0];
  if (guess && guess.confidence >= CHARDET_MIN_CONFIDENCE) {
    const name = guess.name.toLowerCase();
    if (CJK_MULTIBYTE.has(name) && iconv.encodingExists(name)) {
      return { text: iconv.decode(bytes, name), encoding: name };
    }
  }

  return { text: iconv.decode(bytes, 'windows-1252'), encoding: 'windows-1252' };
}

function decodeByBom(bytes: Buffer): DecodedText | null {
  const bom = bomOf(bytes);
  if (!bom) return null;
  const body = bytes.subarray(bom.length);
  return { text: bom.encoding === 'utf-8' ? body.toString('utf8') : iconv.decode(body, bom.encoding), encoding: bom.encoding };
}

/** `text/csv; charset="Shift_JIS"` -> 'shift_jis'; null when absent. */
export function charsetFromContentType(contentType: string | undefined): string | null {
  if (!contentType) return null;
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return m ? m[1].toLowerCase() : null;
}

function isUtf8Name(name: string): boolean {
  return name === 'utf-8' || name === 'utf8';
}

function tryUtf8(bytes: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * ASCII-heavy text in UTF-16 has a NUL in every other byte; which half holds the NULs gives the
 * byte order.
 */
function sniffUtf16(sample: Buffer): 'utf-16le' | 'utf-16be' | null {
  const pairs = Math.floor(sample.length / 2);
  if (pairs < 2) return null;
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i + 1 < sample.length; i += 2) {
    if (sample[i] === 0) evenNul++;
    if (sample[i + 1] === 0) oddNul++;
  }
  if (oddNul / pairs > 0.3 && evenNul / pairs < 0.05) return 'utf-16le';
  if (evenNul / pairs > 0.3 && oddNul / pairs < 0.05) return 'utf-16be';
  return null;
}

/** Control bytes other than tab/CR/LF/FF/ESC in more than 10% of the sample: not text. */
function looksBinary(sample: Buffer): boolean {
  if (sample.length === 0) return false;
  let control = 0;
  for (const b of sample) {
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b) control++;
  }
  return control / sample.length > 0.1;
}

/**
 * Strict structural check: every byte >= 0x80 must be a half-width katakana or part of a valid
 * lead/trail pair, and double-byte characters must mostly come in runs (Japanese words), whereas
 * accented letters in Latin text are isolated between ASCII letters.
 */
function looksLikeShiftJis(sample: Buffer): boolean {
  let doubles = 0;
  let adjacent = 0;
  let lastDoubleEnd = -10;
  let i = 0;
  while (i < sample.length) {
    const b = sample[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    if (b >= 0xa1 && b <= 0xdf) {
      i++;
      continue;
    }
    const isLead = (b >= 0x81 && b <= 0x9f) || (b >= 0xe0 && b <= 0xfc);
    if (!isLead) return false;
    if (i + 1 >= sample.length) break; // a pair cut by the sample window
    const t = sample[i + 1];
    const isTrail = t >= 0x40 && t <= 0xfc && t !== 0x7f;
    if (!isTrail) return false;
    doubles++;
    if (lastDoubleEnd === i) adjacent++;
    lastDoubleEnd = i + 2;
    i += 2;
  }
  return doubles >= 2 && adjacent / doubles >= 0.4;
}

/** decodeText's order of evidence, decoding at most maxChars characters. */
function decodeTextBounded(bytes: Buffer, contentType: string | undefined, maxChars: number): DecodedText {
  const done = (r: { text: string; truncated: boolean }, encoding: string): DecodedText => ({
    text: r.text,
    encoding,
    ...(r.truncated ? { truncated: true } : {}),
  });
  const lossy = (encoding: string, decoder: ChunkDecoder, from = bytes): DecodedText => done(decodeBounded(from, maxChars, decoder)!, encoding);

  const bom = bomOf(bytes);
  if (bom) {
    const body = bytes.subarray(bom.length);
    return lossy(bom.encoding, bom.encoding === 'utf-8' ? utf8Decoder(false) : iconvDecoder(bom.encoding), body);
  }
  const declared = charsetFromContentType(contentType);
  if (declared) {
    if (isUtf8Name(declared)) {
      const r = decodeBounded(bytes, maxChars, utf8Decoder(true));
      if (r) return done(r, 'utf-8');
    } else if (iconv.encodingExists(declared)) {
      return lossy(declared.toLowerCase(), iconvDecoder(declared));
    }
  }
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  const utf16 = sniffUtf16(sample);
  if (utf16) return lossy(utf16, iconvDecoder(utf16));
  const utf8 = decodeBounded(bytes, maxChars, utf8Decoder(true));
  if (utf8) return done(utf8, 'utf-8');
  if (looksBinary(sample)) return lossy('utf-8', utf8Decoder(false));
  if (looksLikeShiftJis(sample)) return lossy('shift_jis', iconvDecoder('cp932'));
  const guess = chardet.analyse(sample)[0];
  if (guess && guess.confidence >= CHARDET_MIN_CONFIDENCE) {
    const name = guess.name.toLowerCase();
    if (CJK_MULTIBYTE.has(name) && iconv.encodingExists(name)) return lossy(name, iconvDecoder(name));
  }
  return lossy('windows-1252', iconvDecoder('windows-1252'));
}
