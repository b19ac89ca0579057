/** Document properties shared by every OOXML format (docProps/core.xml and docProps/app.xml). */
import { isToolError } from '../../errors.ts';
import { readZipEntry, type ZipEntryInfo } from './zip.ts';
import { parseXml, path as xpath, textOf, type XmlNode } from './xml.ts';

const PROPS_MAX_BYTES = 1024 * 1024;

export interface OfficeProps {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string;
  description?: string;
  last_modified_by?: string;
  created?: string;
  modified?: string;
}

/** Core properties (docProps/core.xml) shared by every OOXML format. */
export function readCoreProps(bytes: Buffer, entries: ZipEntryInfo[]): OfficeProps {
  const e = entries.find((x) => x.name === 'docProps/core.xml');
  if (!e) return {};
  let root: XmlNode;
  try {
    root = parseXml(readZipEntry(bytes, e, PROPS_MAX_BYTES), 'docProps/core.xml');
  } catch (err) {
    if (isToolError(err) && err.code === 'PAYLOAD_TOO_LARGE') throw err;
    return {};
  }
  const props = xpath(root, 'coreProperties');
  const get = (local: string): string | undefined => {
    const v = textOf(props?.children.find((c) => c.local === local)).trim();
    return v || undefined;
  };
  const out: OfficeProps = {
    title: get('title'),
    author: get('creator'),
    subject: get('subject'),
    keywords: get('keywords'),
    description: get('description'),
    last_modified_by: get('lastModifiedBy'),
    created: get('created'),
    modified: get('modified'),
  };
  for (const k of Object.keys(out) as Array<keyof OfficeProps>) if (out[k] === undefined) delete out[k];
  return out;
}

/** Extended properties (docProps/app.xml): page/word counts as saved by the authoring app. */
export function readAppProps(bytes: Buffer, entries: ZipEntryInfo[]): Record<string, number> {
  const e = entries.find((x) => x.name === 'docProps/app.xml');
  if (!e) return {};
  try {
    const props = xpath(parseXml(readZipEntry(bytes, e, PROPS_MAX_BYTES), 'docProps/app.xml'), 'Properties');
    const out: Record<string, number> = {};
    for (const [local, key] of [['Pages', 'page_count'], ['Words', 'word_count']] as const) {
      const v = Number.parseInt(textOf(props?.children.find((c) => c.local === local)), 10);
      if (Number.isFinite(v)) out[key] = v;
    }
    return out;
  } catch (err) {
    if (isToolError(err) && err.code === 'PAYLOAD_TOO_LARGE') throw err;
    return {};
  }
}
