/**
 * Reading the parts of an Office Open XML package (PPTX, XLSX): one part parsed as XML with a
 * size bound, and a part's relationships with their targets resolved to package paths.
 */
import path from 'node:path/posix';
import { readZipEntry, type ZipEntryInfo } from './zip.ts';
import { attr, child, children, parseXml, type XmlNode } from './xml.ts';

/** Largest part parsed (a slide, a chart, a drawing); bigger ones fail with PAYLOAD_TOO_LARGE. */
export const PART_MAX_BYTES = 32 * 1024 * 1024;

export interface Rel {
  id: string;
  type: string;
  target: string;
  external: boolean;
}

export interface Package {
  bytes: Buffer;
  entries: Map<string, ZipEntryInfo>;
}

export function readPart(pkg: Package, name: string): XmlNode | undefined {
  const e = pkg.entries.get(name);
  if (!e) return undefined;
  return parseXml(readZipEntry(pkg.bytes, e, PART_MAX_BYTES), name);
}

function relsPathOf(part: string): string {
  return path.join(path.dirname(part), '_rels', `${path.basename(part)}.rels`);
}

export function readRels(pkg: Package, part: string): Map<string, Rel> {
  const rels = new Map<string, Rel>();
  const root = readPart(pkg, relsPathOf(part));
  for (const r of children(child(root, 'Relationships'), 'Relationship')) {
    const id = attr(r, 'Id');
    const target = attr(r, 'Target');
    if (!id || target === undefined) continue;
    const external = attr(r, 'TargetMode') === 'External';
    // Internal targets are relative to the source part's folder (or absolute from the package root).
    const resolved = external
      ? target
      : target.startsWith('/')
        ? target.slice(1)
        : path.normalize(path.join(path.dirname(part), target));
    rels.set(id, { id, type: attr(r, 'Type') ?? '', target: resolved, external });
  }
  return rels;
}

/** The last segment of a relationship type ("chart", "drawing", "worksheet"). */
export const relKind = (rel: Rel): string => rel.type.slice(rel.type.lastIndexOf('/') + 1);
