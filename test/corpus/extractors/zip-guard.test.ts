/** The zip guard and OOXML detection on the real corpus packages (test/extractors/zip-guard.test.ts covers generated ones). */
import fs from 'node:fs';
import t from 'tap';
import { assertSafeZip, ooxmlKind } from '../../../src/extractors/shared/zip.ts';
import { corpusPath, readCorpus } from '../data-dirs.ts';

/** Not zips at all: password-protected OOXML is an OLE2 container. */
const NOT_ZIP = new Set(['xlsx/password_protected.xlsx']);

t.test('every corpus DOCX, PPTX and XLSX passes the guard and is recognised from [Content_Types].xml', async (t) => {
  for (const kind of ['docx', 'pptx', 'xlsx'] as const) {
    const files = fs.readdirSync(corpusPath(kind)).filter((f) => !f.includes('.expected.')).sort();
    t.ok(files.length >= 5, `${kind}: ${files.length} files`);
    for (const f of files) {
      const rel = `${kind}/${f}`;
      const bytes = readCorpus(rel);
      if (NOT_ZIP.has(rel)) {
        t.equal(ooxmlKind(bytes), null, `${rel}: not OOXML`);
        t.throws(() => assertSafeZip(bytes), { code: 'PROCESSING_ERROR' }, `${rel}: not a zip`);
        continue;
      }
      t.equal(ooxmlKind(bytes), kind, rel);
      t.ok(assertSafeZip(bytes).length > 0, `${rel} passes the guard`);
    }
  }
});
