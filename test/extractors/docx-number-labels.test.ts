/** Number labels applied to mammoth's HTML: text labels, ordered-list starts and splits. */
import t from 'tap';
import { MARK_CLOSE, MARK_OPEN } from '../../src/extractors/docx/docx-annotate.ts';
import { applyNumberLabels } from '../../src/extractors/docx/docx-number-labels.ts';
import type { NumberLabel } from '../../src/extractors/docx/docx-numbering.ts';

const mk = (i: number) => `${MARK_OPEN}${i}${MARK_CLOSE}`;
const plain = (value: number): NumberLabel => ({ text: `${value}.`, bullet: false, simple: true, value, level: 0 });
const composite = (text: string, value = 1): NumberLabel => ({ text, bullet: false, simple: false, value, level: 1 });

t.test('headings, paragraphs and bullet items get the label as text (escaped)', async (t) => {
  const labels = [composite('1.2.'), plain(3), composite('<a>')];
  const html = `<h2>${mk(0)}Scope</h2><p>${mk(1)}Plain</p><ul><li>${mk(2)}Item</li></ul>`;
  t.equal(applyNumberLabels(html, labels), '<h2>1.2. Scope</h2><p>3. Plain</p><ul><li>&lt;a&gt; Item</li></ul>');
});

t.test('ordered lists take Word start numbers and split where the count jumps', async (t) => {
  const labels = [plain(4), plain(5), plain(1), plain(1), plain(2)];
  const html = `<ol><li>${mk(0)}d</li><li>${mk(1)}e</li><li>${mk(2)}a</li><li>${mk(3)}a</li><li>${mk(4)}b</li></ol>`;
  t.equal(
    applyNumberLabels(html, labels),
    '<ol start="4"><li>d</li><li>e</li></ol><ol><li>a</li></ol><ol><li>a</li><li>b</li></ol>',
  );
});

t.test('nested lists keep their own counts; unlabelled items count as mammoth shows them', async (t) => {
  const labels = [plain(1), { ...plain(3), level: 1 }, plain(2), composite('2.1)')];
  const html =
    `<ol><li>${mk(0)}one<ol><li>${mk(1)}three</li></ol></li><li>${mk(2)}two<ul><li>${mk(3)}sub</li></ul></li>` +
    `<li>no marker</li></ol><ol><li id="footnote-1">note</li></ol>`;
  t.equal(
    applyNumberLabels(html, labels),
    '<ol><li>one<ol start="3"><li>three</li></ol></li><li>two<ul><li>2.1) sub</li></ul></li><li>no marker</li></ol><ol><li id="footnote-1">note</li></ol>',
  );
});

t.test('a composite label inside an ordered list stays as text; unknown markers vanish', async (t) => {
  const html = `<ol><li>${mk(0)}x</li></ol><p>${mk(7)}y</p>`;
  t.equal(applyNumberLabels(html, [composite('A.1')]), '<ol><li>A.1 x</li></ol><p>y</p>');
  t.equal(applyNumberLabels('<p>nothing</p>', []), '<p>nothing</p>');
});
