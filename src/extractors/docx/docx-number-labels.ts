/**
 * Turns the numbering markers that docx-annotate.ts put into the document into what Word
 * displays, on mammoth's HTML string (one linear pass; DOM edits cost ~0.1 ms each in jsdom,
 * which adds up on documents with thousands of numbered paragraphs):
 * - headings, plain paragraphs and bullet-list items get the label as text ("1.2. Introduction",
 *   "- a) Collect samples"; labelled levels were made bullet levels for mammoth);
 * - ordered-list items with plain counters keep their Markdown `1.` marker, and the list gets
 *   Word's start number and is split where Word's numbering jumps (mammoth merges adjacent lists
 *   of one level into one, so one list in its output can hold several restarted ones).
 */
import { MARK_CLOSE, MARK_OPEN } from './docx-annotate.ts';
import type { NumberLabel } from './docx-numbering.ts';

interface OpenList {
  ordered: boolean;
  /** Index just before the '>' of the opening tag, where a start attribute goes. */
  attrAt: number;
  items: number;
  /** The number the Markdown rendering shows for the latest item. */
  shown: number;
}

interface Edit {
  at: number;
  remove: number;
  insert: string;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const TOKEN = new RegExp(`<(/?)(ol|ul|li)\\b[^>]*>|${MARK_OPEN}(\\d+)${MARK_CLOSE}`, 'g');
const ITEM_MARKER = new RegExp(`^${MARK_OPEN}(\\d+)${MARK_CLOSE}`);

/** Apply the labels (indexed by marker number) to mammoth's HTML; every marker is removed. */
export function applyNumberLabels(html: string, labels: NumberLabel[]): string {
  if (!html.includes(MARK_OPEN)) return html;
  const edits: Edit[] = [];
  const stack: OpenList[] = [];
  const asText = (at: number, marker: string, label: NumberLabel | undefined) =>
    edits.push({ at, remove: marker.length, insert: label?.text ? `${escapeHtml(label.text)} ` : '' });

  const re = new RegExp(TOKEN.source, 'g');
  for (let m = re.exec(html); m; m = re.exec(html)) {
    if (m[3] !== undefined) {
      // A marker not at the start of a list item: heading, paragraph, table cell.
      asText(m.index, m[0], labels[Number(m[3])]);
      continue;
    }
    const closing = m[1] === '/';
    const tag = m[2];
    if (tag !== 'li') {
      if (closing) stack.pop();
      else stack.push({ ordered: tag === 'ol', attrAt: m.index + m[0].length - 1, items: 0, shown: 0 });
      continue;
    }
    if (closing) continue;
    const list = stack.at(-1);
    const after = m.index + m[0].length;
    const hit = html.startsWith(MARK_OPEN, after) ? ITEM_MARKER.exec(html.slice(after, after + 24)) : null;
    const label = hit ? labels[Number(hit[1])] : undefined;
    if (hit) re.lastIndex = after + hit[0].length;
    if (!list || !list.ordered) {
      if (hit) asText(after, hit[0], label);
      if (list) list.items++;
      continue;
    }
    if (!hit || !label?.simple) {
      // Unlabelled items keep mammoth's count; a composite label in an ordered list is kept as text.
      if (hit) asText(after, hit[0], label);
      list.shown = list.items === 0 ? 1 : list.shown + 1;
      list.items++;
      continue;
    }
    edits.push({ at: after, remove: hit[0].length, insert: '' });
    const value = label.value;
    if (list.items === 0) {
      if (value !== 1) edits.push({ at: list.attrAt, remove: 0, insert: ` start="${value}"` });
    } else if (value !== list.shown + 1) {
      edits.push({ at: m.index, remove: 0, insert: value === 1 ? '</ol><ol>' : `</ol><ol start="${value}">` });
    }
    list.shown = value;
    list.items++;
  }

  edits.sort((a, b) => a.at - b.at);
  const out: string[] = [];
  let copied = 0;
  for (const e of edits) {
    out.push(html.slice(copied, e.at), e.insert);
    copied = e.at + e.remove;
  }
  out.push(html.slice(copied));
  // Anything the pass could not place (never expected) must not leak into the text.
  return out.join('').replace(new RegExp(`${MARK_OPEN}\\d*${MARK_CLOSE}`, 'g'), '');
}
