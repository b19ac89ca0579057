/**
 * Name lookups over the format table (src/extractors/registry.ts): the media types and extensions
 * that name a format (detect-type.ts) and what the server advertises per kind (get_system_health,
 * rag://supported-formats: tools/formats.ts). Nothing here is per format: a name the detector
 * accepts is a name the server advertises.
 */
import { DOCUMENT_KINDS, FORMATS, KINDS, type DetectedFormat } from '../extractors/registry.ts';
import type { FormatSpec } from '../extractors/shared/descriptor.ts';
import type { DocumentKind } from '../extractors/shared/types.ts';

export { DOCUMENT_KINDS, FORMATS, KINDS, type DetectedFormat, type FormatSpec };

const ALL = Object.entries(FORMATS) as [DetectedFormat, FormatSpec<DocumentKind>][];

/** name -> format, refusing a name claimed twice (the table must be unambiguous). */
function index(names: (f: FormatSpec) => readonly string[]): ReadonlyMap<string, DetectedFormat> {
  const out = new Map<string, DetectedFormat>();
  for (const [format, spec] of ALL) {
    for (const name of names(spec)) {
      if (out.has(name)) throw new Error(`format table: "${name}" names both ${out.get(name)} and ${format}`);
      out.set(name, format);
    }
  }
  return out;
}

export const FORMAT_BY_MEDIA_TYPE = index((f) => f.mediaTypes);
export const FORMAT_BY_EXTENSION = index((f) => f.extensions);

/** What the server advertises for one kind: every extension and media type that detection accepts for it. */
export interface KindFormats {
  format: DocumentKind;
  description: string;
  extensions: string[];
  media_types: string[];
}

export function kindFormats(kind: DocumentKind): KindFormats {
  const specs = ALL.filter(([, f]) => f.kind === kind).map(([, f]) => f);
  return {
    format: kind,
    description: KINDS[kind].description,
    extensions: specs.flatMap((f) => f.extensions.map((e) => `.${e}`)),
    media_types: specs.flatMap((f) => f.mediaTypes),
  };
}
