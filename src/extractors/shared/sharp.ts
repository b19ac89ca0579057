/**
 * sharp (libvips) when it can be loaded: an optional native module, imported on first use. Callers
 * keep a path without it (canvas or the OCR engine's own decoder).
 */
import type SharpModule from 'sharp';

export type Sharp = typeof SharpModule;

let sharpModule: Promise<Sharp | null> | null = null;

export function loadSharp(): Promise<Sharp | null> {
  sharpModule ??= import('sharp').then(
    (m) => ((m as unknown as { default?: Sharp }).default ?? (m as unknown as Sharp)),
    () => null,
  );
  return sharpModule;
}
