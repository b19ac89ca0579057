/** OMML -> LaTeX-style text, one construct at a time. */
import t from 'tap';
import { ommlToLatex } from '../../src/extractors/docx/docx-math.ts';
import { parseXml } from '../../src/extractors/shared/xml.ts';

const r = (s: string) => `<m:r><m:t xml:space="preserve">${s}</m:t></m:r>`;
const latex = (inner: string, para = false) => {
  const xml = para ? `<m:oMathPara><m:oMath>${inner}</m:oMath></m:oMathPara>` : `<m:oMath>${inner}</m:oMath>`;
  return ommlToLatex(parseXml(xml).children[0]);
};

t.test('runs: symbols become spaced commands, specials are escaped, letters stay joined', async (t) => {
  t.equal(latex(r('A=πr')), 'A= \\pi r');
  t.equal(latex(r('x≤y×z') + r('dx')), 'x \\leq y \\times zdx');
  t.equal(latex(r('50% of {a}')), '50\\% of \\{a\\}');
  t.equal(latex(r('a&lt;b')), 'a<b');
  t.equal(latex('<m:r><m:rPr><m:nor/></m:rPr><m:t>if x</m:t></m:r>'), 'if x', 'normal text is kept literally');
  t.equal(latex(r('1+…')), '1+ \\text{ \\textellipsis }');
});

t.test('fractions, scripts, radicals', async (t) => {
  t.equal(latex(`<m:f><m:num>${r('a')}</m:num><m:den>${r('b+1')}</m:den></m:f>`), '\\frac{a}{b+1}');
  t.equal(
    latex(`<m:f><m:fPr><m:type m:val="noBar"/></m:fPr><m:num>${r('n')}</m:num><m:den>${r('k')}</m:den></m:f>`),
    '\\genfrac{}{}{0pt}{}{n}{k}',
  );
  t.equal(latex(`<m:f><m:fPr><m:type m:val="lin"/></m:fPr><m:num>${r('a')}</m:num><m:den>${r('bc')}</m:den></m:f>`), 'a/{bc}');
  t.equal(latex(`<m:sSup><m:e>${r('r')}</m:e><m:sup>${r('2')}</m:sup></m:sSup>`), 'r^{2}');
  t.equal(latex(`<m:sSup><m:e>${r('xy')}</m:e><m:sup>${r('2')}</m:sup></m:sSup>`), '{xy}^{2}', 'a longer base is braced');
  t.equal(latex(`<m:sSub><m:e>${r('a')}</m:e><m:sub>${r('n')}</m:sub></m:sSub>`), 'a_{n}');
  t.equal(latex(`<m:sSubSup><m:e>${r('N')}</m:e><m:sub>${r('s')}</m:sub><m:sup>${r('H')}</m:sup></m:sSubSup>`), 'N_{s}^{H}');
  t.equal(latex(`<m:sPre><m:sub>${r('1')}</m:sub><m:sup/><m:e>${r('X')}</m:e></m:sPre>`), '{}_{1}X');
  t.equal(latex(`<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr><m:deg/><m:e>${r('x')}</m:e></m:rad>`), '\\sqrt{x}');
  t.equal(latex(`<m:rad><m:deg>${r('3')}</m:deg><m:e>${r('x')}</m:e></m:rad>`), '\\sqrt[3]{x}');
});

t.test('n-ary operators, delimiters, functions, limits', async (t) => {
  t.equal(
    latex(`<m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr><m:sub>${r('n=1')}</m:sub><m:sup>${r('∞')}</m:sup><m:e>${r('a')}</m:e></m:nary>`),
    '\\sum_{n=1}^{\\infty}a',
  );
  t.equal(
    latex(`<m:nary><m:naryPr><m:subHide m:val="1"/><m:supHide m:val="1"/></m:naryPr><m:sub/><m:sup/><m:e>${r('f')}</m:e></m:nary>`),
    '\\int f',
    'the default operator is the integral; hidden limits are left out',
  );
  t.equal(latex(`<m:d><m:e>${r('x+a')}</m:e></m:d>`), '\\left(x+a\\right)');
  t.equal(
    latex(`<m:d><m:dPr><m:begChr m:val="{"/><m:endChr m:val=""/><m:sepChr m:val=","/></m:dPr><m:e>${r('a')}</m:e><m:e>${r('b')}</m:e></m:d>`),
    '\\left\\{a,b\\right.',
  );
  t.equal(latex(`<m:func><m:fName>${r('sin')}</m:fName><m:e>${r('x')}</m:e></m:func>`), '\\sin x');
  t.equal(latex(`<m:func><m:fName>${r('sgn')}</m:fName><m:e>${r('x')}</m:e></m:func>`), '\\operatorname{sgn}x');
  t.equal(
    latex(`<m:func><m:fName><m:limLow><m:e>${r('lim')}</m:e><m:lim>${r('n→∞')}</m:lim></m:limLow></m:fName><m:e>${r('a')}</m:e></m:func>`),
    '\\lim_{n \\rightarrow \\infty}a',
  );
  t.equal(latex(`<m:limUpp><m:e>${r('=')}</m:e><m:lim>${r('def')}</m:lim></m:limUpp>`), '\\overset{def}{=}');
  t.equal(
    latex(`<m:limLow><m:e><m:groupChr><m:e>${r('a+b')}</m:e></m:groupChr></m:e><m:lim>${r('n')}</m:lim></m:limLow>`),
    '\\underbrace{a+b}_{n}',
  );
});

t.test('accents, bars, boxes, matrices, equation arrays, paragraphs', async (t) => {
  t.equal(latex(`<m:acc><m:e>${r('x')}</m:e></m:acc>`), '\\hat{x}');
  t.equal(latex(`<m:acc><m:accPr><m:chr m:val="\u20d7"/></m:accPr><m:e>${r('v')}</m:e></m:acc>`), '\\vec{v}');
  t.equal(latex(`<m:bar><m:barPr><m:pos m:val="top"/></m:barPr><m:e>${r('z')}</m:e></m:bar>`), '\\overline{z}');
  t.equal(latex(`<m:borderBox><m:e>${r('E')}</m:e></m:borderBox>`), '\\boxed{E}');
  t.equal(latex(`<m:box><m:e>${r('dx')}</m:e></m:box>`), 'dx');
  t.equal(
    latex(`<m:m><m:mr><m:e>${r('1')}</m:e><m:e>${r('0')}</m:e></m:mr><m:mr><m:e>${r('0')}</m:e><m:e>${r('1')}</m:e></m:mr></m:m>`),
    '\\begin{matrix}1 & 0 \\\\ 0 & 1\\end{matrix}',
  );
  t.equal(latex(`<m:eqArr><m:e>${r('x=1')}</m:e><m:e>${r('y=2')}</m:e></m:eqArr>`), 'x=1 \\\\ y=2');
  t.equal(latex(r('a') + '<m:ctrlPr><w:rPr xmlns:w="w"><w:i/></w:rPr></m:ctrlPr>', true), 'a', 'properties add nothing');
  const two = ommlToLatex(parseXml(`<m:oMathPara><m:oMath>${r('a')}</m:oMath><m:oMath>${r('b')}</m:oMath></m:oMathPara>`).children[0]);
  t.equal(two, 'a \\\\ b');
});
