/**
 * Safe XML parsing for OOXML parts: entity expansion is off (no DOCTYPE entities, so no "billion
 * laughs"), only the five predefined entities and numeric character references are decoded, and
 * the input size is capped by the caller (parts come from the zip guard). Elements are matched by
 * local name so Transitional and Strict OOXML (same prefixes, different namespace URIs, sometimes
 * different prefixes) walk the same way.
 */
import { XMLParser } from 'fast-xml-parser';
import { toolError } from '../../errors.ts';

export interface XmlNode {
  /** Qualified name as written ("a:p"); '#text' for text nodes. */
  name: string;
  /** Local name without prefix ("p"). */
  local: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  /** Decoded text, only for '#text' nodes. */
  text?: string;
}

const ENTITY_RE = /&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);/g;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decode the predefined XML entities and numeric character references; leave anything else as is. */
export function decodeXmlEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(ENTITY_RE, (m, body: string) => {
    if (body[0] !== '#') return NAMED[body] ?? m;
    const cp = body[1] === 'x' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    if (!Number.isFinite(cp) || cp < 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return '\uFFFD';
    return String.fromCodePoint(cp);
  });
}

function localName(name: string): string {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  removeNSPrefix: false,
});

type Raw = Record<string, unknown>;

function convert(raw: Raw[]): XmlNode[] {
  const out: XmlNode[] = [];
  for (const item of raw) {
    for (const key of Object.keys(item)) {
      if (key === ':@') continue;
      const value = item[key];
      if (key === '#text') {
        out.push({ name: '#text', local: '#text', attrs: {}, children: [], text: decodeXmlEntities(String(value)) });
        continue;
      }
      if (key.startsWith('?') || key.startsWith('!')) continue;
      const attrsRaw = (item[':@'] ?? {}) as Record<string, unknown>;
      const attrs: Record<string, string> = {};
      for (const [k, v] of Object.entries(attrsRaw)) attrs[k] = decodeXmlEntities(String(v));
      out.push({
        name: key,
        local: localName(key),
        attrs,
        children: Array.isArray(value) ? convert(value as Raw[]) : [],
      });
    }
  }
  return out;
}

/**
 * Parse XML into a small ordered tree. Documents with a DOCTYPE are refused: OOXML never has one,
 * and refusing is the simplest way to rule out entity tricks. Throws PROCESSING_ERROR on bad input.
 */
export function parseXml(xml: string | Buffer, what = 'XML part'): XmlNode {
  let text = typeof xml === 'string' ? xml : xml.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (/<!DOCTYPE/i.test(text.slice(0, 4096))) {
    throw toolError('PROCESSING_ERROR', `${what} contains a DOCTYPE, which is not allowed`);
  }
  let raw: Raw[];
  try {
    raw = parser.parse(text) as Raw[];
  } catch (err) {
    throw toolError('PROCESSING_ERROR', `${what} is not well-formed XML: ${(err as Error).message}`, err);
  }
  const nodes = convert(Array.isArray(raw) ? raw : []).filter((n) => n.name !== '#text');
  if (nodes.length === 0) throw toolError('PROCESSING_ERROR', `${what} has no root element`);
  return { name: '#document', local: '#document', attrs: {}, children: nodes };
}

/** First child element with this local name. */
export function child(node: XmlNode | undefined, local: string): XmlNode | undefined {
  return node?.children.find((c) => c.local === local);
}

/** All child elements with this local name. */
export function children(node: XmlNode | undefined, local: string): XmlNode[] {
  return node ? node.children.filter((c) => c.local === local) : [];
}

/** Follow a path of local names through first children. */
export function path(node: XmlNode | undefined, ...locals: string[]): XmlNode | undefined {
  let cur = node;
  for (const l of locals) cur = child(cur, l);
  return cur;
}

/** All descendant elements with this local name, in document order. */
export function descendants(node: XmlNode | undefined, local: string, out: XmlNode[] = []): XmlNode[] {
  if (!node) return out;
  for (const c of node.children) {
    if (c.local === local) out.push(c);
    descendants(c, local, out);
  }
  return out;
}

/** Attribute by name, falling back to the local name under any prefix; exact name wins. */
export function attr(node: XmlNode | undefined, name: string): string | undefined {
  if (!node) return undefined;
  if (name in node.attrs) return node.attrs[name];
  // A prefixed request ("r:id") only matches prefixed attributes, so it never picks a plain "id".
  const want = localName(name);
  const prefixed = name.includes(':');
  for (const [k, v] of Object.entries(node.attrs)) {
    if (localName(k) === want && (!prefixed || k.includes(':'))) return v;
  }
  return undefined;
}

/** Concatenated text of all descendant text nodes. */
export function textOf(node: XmlNode | undefined): string {
  if (!node) return '';
  if (node.text !== undefined) return node.text;
  let s = '';
  for (const c of node.children) s += textOf(c);
  return s;
}
