/**
 * A collection lexical index's approxBytes (what KB_INDEX_CACHE_MB counts, asked at every search)
 * is kept between changes and follows each one: read between the steps, it equals the figure of
 * an index that went through the same steps without being asked.
 */
import t from 'tap';
import { CollectionLexicalIndex, type LexicalChunk } from '../../src/kb/lexical-index.ts';
import { Analyzer } from '../../src/retrieval/tokenizer.ts';

const chunks: LexicalChunk[] = Array.from({ length: 6_000 }, (_, i) => ({
  id: i + 1,
  text: `report ${i % 97} on harbour crane ${i % 13} lifting crate${i} beside ledger${i % 311} at dawn`,
  heading_path: i % 5 === 0 ? [`Section ${i % 7}`] : [],
}));
const make = () => new CollectionLexicalIndex(new Analyzer());

t.test('approxBytes follows adds, removes, compaction, block maxima and shrinking', async (t) => {
  const asked = make();
  const quiet = make();
  const seen: number[] = [];
  const step = (what: string, fn: (ix: CollectionLexicalIndex) => void) => {
    const before = asked.approxBytes;
    fn(asked);
    fn(quiet);
    t.equal(asked.approxBytes, quiet.approxBytes, `${what}: the kept figure is the fresh one`);
    seen.push(before);
  };
  step('first adds', (ix) => ix.add(chunks.slice(0, 3_000)));
  step('more adds', (ix) => ix.add(chunks.slice(3_000)));
  step('searches (block maxima built)', (ix) => {
    ix.searchPruned('harbour crane ledger7', 10);
    ix.searchPruned('crate4242 dawn report', 10);
  });
  step('removes', (ix) => ix.remove(chunks.slice(0, 500).map((c) => c.id), { deferCompaction: true }));
  step('a compaction', (ix) => ix.compact());
  step('shrinking', (ix) => ix.shrinkToFit());
  step('searches again', (ix) => ix.searchPruned('ledger42 crane', 10));
  t.ok(seen[1] > seen[0] && seen[2] > seen[1], 'adds grew it');
  t.ok(asked.approxBytes !== seen[seen.length - 1], 'the last step changed it');
});
