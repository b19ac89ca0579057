/** Safe XML for OOXML parts: no DOCTYPE, no entity expansion, predefined entities decoded. */
import t from 'tap';
import { attr, child, decodeXmlEntities, descendants, parseXml, textOf } from '../../src/extractors/shared/xml.ts';
import { extractPptx } from '../../src/extractors/pptx/pptx.ts';
import { readZipEntries } from '../../src/extractors/shared/zip.ts';
import { buildZip, makeSamplePptx } from '../fixtures-gen/make-office-fixtures.ts';

const signal = new AbortController().signal;

t.test('billion laughs and external entities are refused, not expanded', async (t) => {
  const laughs =
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
    '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><lolz>&lol3;</lolz>';
  t.throws(() => parseXml(laughs), { code: 'PROCESSING_ERROR' });
  const xxe = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>';
  t.throws(() => parseXml(xxe), { code: 'PROCESSING_ERROR' });
});

t.test('predefined entities and character references decode; unknown ones stay literal', async (t) => {
  t.equal(decodeXmlEntities('a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; &#65;&#x263A; &custom;'), 'a <b> & "c" \'d\' A☺ &custom;');
  const root = parseXml('<a:p xmlns:a="urn:x"><a:r><a:t xml:space="preserve"> Fish &amp; chips </a:t></a:r><a:r r:id="rId7"/></a:p>');
  const p = child(root, 'p');
  t.equal(textOf(p), ' Fish & chips ', 'whitespace in text runs is preserved');
  t.equal(attr(descendants(root, 'r')[1], 'r:id'), 'rId7');
  t.equal(attr(descendants(root, 'r')[1], 'id'), 'rId7', 'local-name lookup');
});

t.test('a slide with a DOCTYPE is skipped and reported; the rest of the deck is read', async (t) => {
  const entries = readZipEntries(await makeSamplePptx());
  const specs = [...entries].map(([name, data]) => ({
    name,
    data:
      name === 'ppt/slides/slide1.xml'
        ? Buffer.from(data.toString('utf8').replace('<p:sld ', '<!DOCTYPE p [<!ENTITY x "y">]><p:sld '))
        : data,
  }));
  const doc = await extractPptx({ bytes: buildZip(specs), signal });
  t.equal(doc.metadata.slide_count, 3);
  t.same(doc.metadata.unreadable_slides, [3], 'slide1.xml is the third slide in presentation order');
  t.match(doc.content, /--- Slide 1 ---\n\n# Heron Survey Briefing/);
});
