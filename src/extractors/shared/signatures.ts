/**
 * Byte signatures shared by type detection and the extractors: the ZIP and OLE2 container magic
 * numbers and the byte-order marks. One table each, so detection and decoding agree.
 */

export const startsWith = (b: Uint8Array, sig: readonly number[], at = 0): boolean =>
  b.length >= at + sig.length && sig.every((x, i) => b[at + i] === x);

/** A ZIP local file header, or the end-of-central-directory record of an empty archive. */
export const ZIP_SIGNATURES: readonly (readonly number[])[] = [
  [0x50, 0x4b, 0x03, 0x04],
  [0x50, 0x4b, 0x05, 0x06],
];

/** An OLE2 compound file (legacy .xls, .doc, .ppt, encrypted OOXML). */
export const OLE2_SIGNATURE: readonly number[] = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

export const hasZipSignature = (b: Uint8Array): boolean => ZIP_SIGNATURES.some((sig) => startsWith(b, sig));
export const hasOle2Signature = (b: Uint8Array): boolean => startsWith(b, OLE2_SIGNATURE);

/** Whether an OLE2 compound file names a directory entry (a stream or storage) `name`, at any depth. */
export const oleHasEntry = (b: Buffer, name: string): boolean => b.includes(Buffer.from(`${name}\0`, 'utf16le'));

export type BomEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be';

/** Byte-order marks, longest first: the UTF-32LE mark begins with the UTF-16LE one. */
export const BOMS: readonly { encoding: BomEncoding; bytes: readonly number[] }[] = [
  { encoding: 'utf-32le', bytes: [0xff, 0xfe, 0x00, 0x00] },
  { encoding: 'utf-32be', bytes: [0x00, 0x00, 0xfe, 0xff] },
  { encoding: 'utf-8', bytes: [0xef, 0xbb, 0xbf] },
  { encoding: 'utf-16le', bytes: [0xff, 0xfe] },
  { encoding: 'utf-16be', bytes: [0xfe, 0xff] },
];

/** The byte-order mark the bytes start with, with its length; null when there is none. */
export function bomOf(b: Uint8Array): { encoding: BomEncoding; length: number } | null {
  const bom = BOMS.find((m) => startsWith(b, m.bytes));
  return bom ? { encoding: bom.encoding, length: bom.bytes.length } : null;
}
