/**
 * PPTX -> Markdown by walking the package ourselves: slide order from presentation.xml and its
 * relationships, shapes in tree order (groups recursed), titles from the title placeholder, body
 * paragraphs indented by their outline level, tables (a:tbl) as pipe tables, chart data from the
 * chart parts, speaker notes from each slide's notes part, external hyperlinks from slide rels.
 */
import path from 'node:path/posix';
import { toolError, isToolError } from '../../errors.ts';
import type { ExtractInput, ExtractedTable, ExtractedUrl, PageSpan, ProcessedDocument } from '../shared/types.ts';
import { assertSafeZip } from '../shared/zip.ts';
import { attr, child, children, descendants, path as xpath, textOf, type XmlNode } from '../shared/xml.ts';
import { readPart, readRels, relKind, type Package, type Rel } from '../shared/ooxml-parts.ts';
import { chartLines as renderChart, readChart } from '../shared/chart-xml.ts';
import { toPipeTable } from '../shared/markdown-table.ts';
import { readCoreProps } from '../shared/office-props.ts';

const TABLE_CONTENT_MAX = 5000;

interface SlideCtx {
  rels: Map<string, Rel>;
  pkg: Package;
  slide: number;
  lines: string[];
  tables: ExtractedTable[];
  images: Array<Record<string, unknown>>;
  linkText: Map<string, string[]>;
  title?: string;
  charts: number;
}

/** Placeholder type of a shape ('' when it is not a placeholder). */
function placeholder(shape: XmlNode): { type: string; isPh: boolean } {
  const nv = child(shape, 'nvSpPr') ?? child(shape, 'nvPicPr') ?? child(shape, 'nvGraphicFramePr');
  const ph = xpath(nv, 'nvPr', 'ph');
  return { type: ph ? (attr(ph, 'type') ?? 'body') : '', isPh: !!ph };
}

/** Text of one paragraph: runs, fields and line breaks in order; hyperlinked run text remembered. */
function paragraphText(p: XmlNode, ctx?: SlideCtx): string {
  let s = '';
  for (const c of p.children) {
    if (c.local === 'r' || c.local === 'fld') {
      const t = textOf(child(c, 't'));
      s += t;
      const link = attr(xpath(c, 'rPr', 'hlinkClick'), 'r:id');
      if (ctx && link && t.trim()) {
        const list = ctx.linkText.get(link) ?? [];
        list.push(t.trim());
        ctx.linkText.set(link, list);
      }
    } else if (c.local === 'br') {
      s += '\n';
    } else if (c.local === 'AlternateContent') {
      // Inline math and other extensions: the fallback carries plain runs.
      const fb = child(c, 'Fallback') ?? child(c, 'Choice');
      if (fb) s += paragraphText(fb, ctx);
    }
  }
  return s;
}

/** Lines of a text body with bullet/number markers and outline-level indentation. */
function textBodyLines(body: XmlNode, bulletsByDefault: boolean, ctx?: SlideCtx): string[] {
  const lines: string[] = [];
  const counters: number[] = [];
  for (const p of children(body, 'p')) {
    const text = paragraphText(p, ctx).replace(/[ \t]+/g, ' ').trim();
    const pPr = child(p, 'pPr');
    const lvl = Math.min(8, Math.max(0, Number.parseInt(attr(pPr, 'lvl') ?? '0', 10) || 0));
    if (!text) {
      continue;
    }
    const autoNum = child(pPr, 'buAutoNum');
    const bullet = !child(pPr, 'buNone') && (bulletsByDefault || !!child(pPr, 'buChar') || !!autoNum);
    counters.length = lvl + 1;
    if (!bullet) {
      lines.push(text);
      continue;
    }
    const indent = '  '.repeat(lvl);
    if (autoNum) {
      counters[lvl] = (counters[lvl] ?? Number.parseInt(attr(autoNum, 'startAt') ?? '1', 10) - 1) + 1;
      lines.push(`${indent}${counters[lvl]}. ${text.replace(/\n/g, ' ')}`);
    } else {
      lines.push(`${indent}- ${text.replace(/\n/g, ' ')}`);
    }
  }
  return lines;
}

function tableRows(tbl: XmlNode, ctx: SlideCtx): string[][] {
  const grid: string[][] = [];
  children(tbl, 'tr').forEach((tr, ri) => {
    const row: string[] = [];
    children(tr, 'tc').forEach((tc, ci) => {
      const body = child(tc, 'txBody');
      let text = body ? textBodyLines(body, false, ctx).join(' ') : '';
      // Continuation cells of a merge are empty in the XML; spread the origin's text.
      if (attr(tc, 'hMerge') === '1' || attr(tc, 'hMerge') === 'true') text = row[ci - 1] ?? text;
      else if (attr(tc, 'vMerge') === '1' || attr(tc, 'vMerge') === 'true') text = grid[ri - 1]?.[ci] ?? text;
      row.push(text);
    });
    grid.push(row);
  });
  const width = Math.max(0, ...grid.map((r) => r.length));
  return grid.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? ''));
}

function chartLines(chartPart: string, ctx: SlideCtx): string[] {
  const chart = readChart(ctx.pkg, chartPart);
  if (!chart) return [];
  ctx.charts++;
  return renderChart(chart);
}

function walkShapes(tree: XmlNode, ctx: SlideCtx): void {
  for (const shape of tree.children) {
    switch (shape.local) {
      case 'sp': {
        const ph = placeholder(shape);
        if (ph.type === 'sldNum') break;
        const body = child(shape, 'txBody');
        if (!body) break;
        if (ph.type === 'title' || ph.type === 'ctrTitle') {
          const t = textBodyLines(body, false, ctx).join(' ').trim();
          // The first title leads the slide whatever its place in the shape tree.
          if (t && ctx.title === undefined) ctx.title = t;
          else if (t) ctx.lines.push(`# ${t}`);
          break;
        }
        // Body and object placeholders inherit bullets from the master; other text boxes do not.
        const bullets = ph.isPh && (ph.type === 'body' || ph.type === 'obj');
        const lines = textBodyLines(body, bullets, ctx);
        if (lines.length) ctx.lines.push(lines.join('\n'));
        break;
      }
      case 'grpSp':
        walkShapes(shape, ctx);
        break;
      case 'graphicFrame': {
        const data = xpath(shape, 'graphic', 'graphicData');
        const tbl = child(data, 'tbl');
        if (tbl) {
          const rows = tableRows(tbl, ctx);
          if (rows.length && rows[0].length) {
            const index = ctx.tables.filter((t) => t.metadata.slide === ctx.slide).length + 1;
            ctx.lines.push(toPipeTable(rows));
            ctx.tables.push({
              content: toPipeTable(rows, { maxChars: TABLE_CONTENT_MAX }),
              table_type: 'pptx',
              location: `slide:${ctx.slide}`,
              metadata: { rows: rows.length, columns: rows[0].length, slide: ctx.slide, index_on_slide: index, has_header: true },
              headers: rows[0],
              rows: rows.slice(1),
            });
          }
          break;
        }
        const chartRef = attr(child(data, 'chart'), 'r:id');
        const rel = chartRef ? ctx.rels.get(chartRef) : undefined;
        if (rel && !rel.external) ctx.lines.push(chartLines(rel.target, ctx).join('\n'));
        break;
      }
      case 'pic': {
        const nv = xpath(shape, 'nvPicPr', 'cNvPr');
        const alt = (attr(nv, 'descr') ?? '').replace(/\s+/g, ' ').trim();
        const embed = attr(descendants(shape, 'blip')[0], 'r:embed');
        const target = embed ? ctx.rels.get(embed)?.target : undefined;
        const file = target ? path.basename(target) : '';
        ctx.images.push({ slide: ctx.slide, name: attr(nv, 'name') ?? '', alt_text: alt || undefined, part: target });
        if (alt) ctx.lines.push(`![${alt.replace(/[[\]]/g, '')}](${file})`);
        break;
      }
      case 'AlternateContent': {
        const choice = child(shape, 'Choice');
        const fallback = child(shape, 'Fallback');
        const before = ctx.lines.length;
        if (choice) walkShapes(choice, ctx);
        if (ctx.lines.length === before && fallback) walkShapes(fallback, ctx);
        break;
      }
      default:
        break;
    }
  }
}

function notesText(pkg: Package, notesPart: string): string {
  const root = readPart(pkg, notesPart);
  const tree = xpath(root, 'notes', 'cSld', 'spTree');
  const out: string[] = [];
  const visit = (t: XmlNode): void => {
    for (const shape of t.children) {
      if (shape.local === 'grpSp') visit(shape);
      if (shape.local !== 'sp') continue;
      const ph = placeholder(shape);
      // The notes page also carries the slide image, slide number, header and footer placeholders.
      if (ph.isPh && ph.type !== 'body') continue;
      const body = child(shape, 'txBody');
      if (body) out.push(...textBodyLines(body, false));
    }
  };
  if (tree) visit(tree);
  return out.join('\n').trim();
}

function slideOrder(pkg: Package): string[] {
  const presPart = 'ppt/presentation.xml';
  const pres = readPart(pkg, presPart);
  if (!pres) throw toolError('PROCESSING_ERROR', 'Not a PowerPoint presentation: ppt/presentation.xml is missing');
  const rels = readRels(pkg, presPart);
  const ids = children(xpath(pres, 'presentation', 'sldIdLst'), 'sldId');
  const order: string[] = [];
  for (const s of ids) {
    const rel = rels.get(attr(s, 'r:id') ?? '');
    if (rel && !rel.external) order.push(rel.target);
  }
  if (order.length === 0 && ids.length === 0) {
    // No list (some generators): fall back to slide relationships in numeric part order.
    const slides = [...rels.values()].filter((r) => relKind(r) === 'slide').map((r) => r.target);
    slides.sort((a, b) => Number(a.match(/(\d+)\.xml$/)?.[1] ?? 0) - Number(b.match(/(\d+)\.xml$/)?.[1] ?? 0));
    return slides;
  }
  return order;
}

export async function extractPptx(input: ExtractInput): Promise<ProcessedDocument> {
  const { bytes, signal } = input;
  signal.throwIfAborted();
  const list = assertSafeZip(bytes);
  const pkg: Package = { bytes, entries: new Map(list.map((e) => [e.name, e])) };
  const order = slideOrder(pkg);

  const parts: string[] = [];
  const pages: PageSpan[] = [];
  const tables: ExtractedTable[] = [];
  const images: Array<Record<string, unknown>> = [];
  const urls: ExtractedUrl[] = [];
  const seenUrls = new Set<string>();
  const unreadable: number[] = [];
  const hidden: number[] = [];
  let notesCount = 0;
  let charts = 0;
  let offset = 0;

  for (let i = 0; i < order.length; i++) {
    signal.throwIfAborted();
    const n = i + 1;
    const ctx: SlideCtx = {
      rels: new Map(), pkg, slide: n, lines: [], tables, images, linkText: new Map(), charts: 0,
    };
    let notes = '';
    try {
      const root = readPart(pkg, order[i]);
      const sld = child(root, 'sld');
      if (!sld) throw toolError('PROCESSING_ERROR', `${order[i]} is not a slide`);
      if (attr(sld, 'show') === '0' || attr(sld, 'show') === 'false') hidden.push(n);
      ctx.rels = readRels(pkg, order[i]);
      const tree = xpath(sld, 'cSld', 'spTree');
      if (tree) walkShapes(tree, ctx);
      const notesRel = [...ctx.rels.values()].find((r) => relKind(r) === 'notesSlide' && !r.external);
      if (notesRel) notes = notesText(pkg, notesRel.target);
    } catch (err) {
      if (isToolError(err) && err.code === 'PAYLOAD_TOO_LARGE') throw err;
      unreadable.push(n);
    }
    charts += ctx.charts;
    if (notes) notesCount++;

    const marker = `--- Slide ${n} ---`;
    const body = [marker, ...(ctx.title ? [`# ${ctx.title}`] : []), ...ctx.lines.filter((l) => l.trim())];
    if (notes) body.push(`Notes:\n${notes}`);
    const text = body.join('\n\n');
    const start = offset + (parts.length ? 2 : 0);
    parts.push(text);
    offset = start + text.length;
    pages.push({ number: n, unit: 'slide', ...(ctx.title ? { label: ctx.title.slice(0, 200) } : {}), start, end: offset });

    for (const rel of ctx.rels.values()) {
      if (!rel.external || relKind(rel) !== 'hyperlink') continue;
      if (!/^(https?:|mailto:)/i.test(rel.target) || seenUrls.has(rel.target)) continue;
      seenUrls.add(rel.target);
      urls.push({
        url: rel.target,
        type: 'general',
        context: (ctx.linkText.get(rel.id) ?? []).join(' ').slice(0, 200),
        location: `slide:${n}`,
      });
    }
  }

  if (order.length > 0 && unreadable.length === order.length) {
    throw toolError('PROCESSING_ERROR', 'None of the slides of this presentation could be read');
  }

  const metadata: Record<string, unknown> = {
    format: 'pptx',
    ...readCoreProps(bytes, list),
    slide_count: order.length,
    table_count: tables.length,
    image_count: images.length,
    chart_count: charts,
    slides_with_notes: notesCount,
    link_count: urls.length,
  };
  if (hidden.length) metadata.hidden_slides = hidden;
  if (unreadable.length) metadata.unreadable_slides = unreadable;
  return { kind: 'pptx', content: parts.join('\n\n'), metadata, tables, images, urls, pages };
}
