/**
 * What the OCR helpers draw from: a rendered page canvas or a decoded image. In its own file so
 * the blank check (ocr-blank.ts) and the upright reader (ocr-upright.ts) share it without
 * importing each other.
 */
import type { Canvas, Image } from '@napi-rs/canvas';

export type Drawable = Canvas | Image;
