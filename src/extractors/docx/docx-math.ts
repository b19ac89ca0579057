/**
 * Office Math (OMML: m:oMath, m:oMathPara) -> LaTeX-style text. mammoth drops equations entirely,
 * so without this a formula-heavy document loses its formulas. The output follows common LaTeX
 * conventions (\frac, ^{}, _{}, \sum_{}^{}, \left( \right), \sqrt, symbol commands such as \pi),
 * which is what people and retrieval queries write for formulas. Spacing rule: symbol commands get
 * a space on either side; letters of adjacent runs are joined as written ("xdx" stays one token).
 */
import { attr, child, children, type XmlNode } from '../shared/xml.ts';

/** Characters written as LaTeX commands. */
const SYMBOLS: Record<string, string> = {
  // Greek
  α: '\\alpha', β: '\\beta', γ: '\\gamma', δ: '\\delta', ε: '\\varepsilon', ϵ: '\\epsilon', ζ: '\\zeta',
  η: '\\eta', θ: '\\theta', ϑ: '\\vartheta', ι: '\\iota', κ: '\\kappa', λ: '\\lambda', μ: '\\mu', ν: '\\nu',
  ξ: '\\xi', π: '\\pi', ϖ: '\\varpi', ρ: '\\rho', ϱ: '\\varrho', σ: '\\sigma', ς: '\\varsigma', τ: '\\tau',
  υ: '\\upsilon', φ: '\\varphi', ϕ: '\\phi', χ: '\\chi', ψ: '\\psi', ω: '\\omega',
  Γ: '\\Gamma', Δ: '\\Delta', Θ: '\\Theta', Λ: '\\Lambda', Ξ: '\\Xi', Π: '\\Pi', Σ: '\\Sigma',
  Υ: '\\Upsilon', Φ: '\\Phi', Ψ: '\\Psi', Ω: '\\Omega',
  // Operators and relations
  '±': '\\pm', '∓': '\\mp', '×': '\\times', '÷': '\\div', '⋅': '\\cdot', '·': '\\cdot', '∘': '\\circ',
  '∗': '\\ast', '⋆': '\\star', '⊕': '\\oplus', '⊗': '\\otimes', '⊙': '\\odot', '∖': '\\setminus',
  '≤': '\\leq', '≥': '\\geq', '≠': '\\neq', '≈': '\\approx', '≡': '\\equiv', '∼': '\\sim', '≃': '\\simeq',
  '≅': '\\cong', '∝': '\\propto', '≪': '\\ll', '≫': '\\gg', '≺': '\\prec', '≻': '\\succ', '⊥': '\\perp',
  '∥': '\\parallel', '∣': '\\mid', '≔': ':=', '≜': '\\triangleq',
  '∈': '\\in', '∉': '\\notin', '∋': '\\ni', '⊂': '\\subset', '⊃': '\\supset', '⊆': '\\subseteq',
  '⊇': '\\supseteq', '∪': '\\cup', '∩': '\\cap', '∅': '\\emptyset', '∀': '\\forall', '∃': '\\exists',
  '∄': '\\nexists', '¬': '\\neg', '∧': '\\wedge', '∨': '\\vee', '⊢': '\\vdash', '⊨': '\\models',
  '→': '\\rightarrow', '←': '\\leftarrow', '↔': '\\leftrightarrow', '⇒': '\\Rightarrow',
  '⇐': '\\Leftarrow', '⇔': '\\Leftrightarrow', '↦': '\\mapsto', '↑': '\\uparrow', '↓': '\\downarrow',
  '⟶': '\\longrightarrow', '⟹': '\\Longrightarrow',
  // Big operators appearing as plain characters
  '∑': '\\sum', '∏': '\\prod', '∐': '\\coprod', '∫': '\\int', '∬': '\\iint', '∭': '\\iiint', '∮': '\\oint',
  '⋃': '\\bigcup', '⋂': '\\bigcap', '⋁': '\\bigvee', '⋀': '\\bigwedge',
  // Miscellaneous
  '∞': '\\infty', '∂': '\\partial', '∇': '\\nabla', '√': '\\surd', '…': '\\text{ \\textellipsis }',
  '⋯': '\\cdots', '⋮': '\\vdots', '⋱': '\\ddots', 'ℏ': '\\hbar', 'ℓ': '\\ell', 'ℵ': '\\aleph',
  '∠': '\\angle', '△': '\\triangle', '∴': '\\therefore', '∵': '\\because', '†': '\\dagger',
  '°': '^{\\circ}', '⟨': '\\langle', '⟩': '\\rangle', '⌊': '\\lfloor', '⌋': '\\rfloor', '⌈': '\\lceil',
  '⌉': '\\rceil', 'ℝ': '\\mathbb{R}', 'ℕ': '\\mathbb{N}', 'ℤ': '\\mathbb{Z}', 'ℚ': '\\mathbb{Q}',
  'ℂ': '\\mathbb{C}', '′': "'", '″': "''", '−': '-', '\u2061': '', '\u2062': '', '\u2063': '', '\u200b': '',
};

/** Large operators of m:nary (the default character is the integral). */
const NARY: Record<string, string> = {
  '∑': '\\sum', '∏': '\\prod', '∐': '\\coprod', '∫': '\\int', '∬': '\\iint', '∭': '\\iiint',
  '∮': '\\oint', '∯': '\\oiint', '∰': '\\oiiint', '⋃': '\\bigcup', '⋂': '\\bigcap', '⋁': '\\bigvee',
  '⋀': '\\bigwedge', '⨁': '\\bigoplus', '⨂': '\\bigotimes', '⨀': '\\bigodot', '⨄': '\\biguplus',
  '⨆': '\\bigsqcup',
};

/** Accent characters of m:acc (combining marks; the default is the circumflex). */
const ACCENTS: Record<string, string> = {
  '\u0302': '\\hat', '\u0303': '\\tilde', '\u0307': '\\dot', '\u0308': '\\ddot', '\u20db': '\\dddot',
  '\u20d7': '\\vec', '\u0304': '\\bar', '\u0305': '\\bar', '\u030c': '\\check', '\u0301': '\\acute',
  '\u0300': '\\grave', '\u0306': '\\breve', '\u02c6': '\\hat', '~': '\\tilde', '\u00af': '\\bar',
};

/** Function names LaTeX has commands for; others become \operatorname{...}. */
const FUNCTIONS = new Set([
  'sin', 'cos', 'tan', 'cot', 'sec', 'csc', 'arcsin', 'arccos', 'arctan', 'sinh', 'cosh', 'tanh', 'coth',
  'log', 'ln', 'lg', 'exp', 'lim', 'liminf', 'limsup', 'max', 'min', 'sup', 'inf', 'det', 'dim', 'ker',
  'deg', 'gcd', 'arg', 'hom', 'Pr',
]);

const DELIMS: Record<string, string> = {
  '{': '\\{', '}': '\\}', '⟨': '\\langle', '⟩': '\\rangle', '〈': '\\langle', '〉': '\\rangle',
  '‖': '\\|', '⌊': '\\lfloor', '⌋': '\\rfloor', '⌈': '\\lceil', '⌉': '\\rceil', '': '.',
};

function escapeChar(ch: string): string {
  const sym = SYMBOLS[ch];
  if (sym !== undefined) return sym === '' ? '' : ` ${sym} `;
  switch (ch) {
    case '{':
    case '}':
    case '#':
    case '$':
    case '%':
    case '&':
    case '_':
      return `\\${ch}`;
    case '\\':
      return '\\backslash ';
    default:
      return ch;
  }
}

/** Concatenate pieces, adding a space only where a command name would run into a letter. */
function join(parts: string[]): string {
  let out = '';
  for (const p of parts) {
    if (!p) continue;
    if (/\\[A-Za-z]+$/.test(out) && /^[A-Za-z]/.test(p)) out += ' ';
    out += p;
  }
  return out;
}

function val(node: XmlNode | undefined): string | undefined {
  return attr(node, 'm:val');
}

function isOn(node: XmlNode | undefined): boolean {
  if (!node) return false;
  const v = val(node);
  return v === undefined || (v !== '0' && v !== 'false' && v !== 'off');
}

function runText(r: XmlNode): string {
  let s = '';
  for (const c of r.children) {
    if (c.local === 't') for (const t of c.children) s += t.text ?? '';
  }
  return s;
}

/** Plain text of an argument made only of runs (operator names such as "lim" or "argmax"). */
function plainText(node: XmlNode | undefined): string | null {
  if (!node) return null;
  let s = '';
  for (const c of node.children) {
    if (c.local === '#text' || c.local.endsWith('Pr')) continue;
    if (c.local !== 'r') return null;
    s += runText(c);
  }
  return s;
}

function operatorName(name: string): string {
  return FUNCTIONS.has(name) ? `\\${name}` : `\\operatorname{${name}}`;
}

/** A base that needs no braces before ^ or _: one character, one command, or one \left...\right. */
function atomic(s: string): boolean {
  if (/^(\\[A-Za-z]+|[^\\{}\s])$/.test(s)) return true;
  return s.lastIndexOf('\\left') === 0 && /\\right(\\[A-Za-z]+|\\?[^\sA-Za-z])$/.test(s);
}

function base(s: string): string {
  return s === '' || atomic(s) ? s : `{${s}}`;
}

/** `_{sub}^{sup}` without the empty parts. */
function limits(sub: string, sup: string): string {
  return `${sub ? `_{${sub}}` : ''}${sup ? `^{${sup}}` : ''}`;
}

function arg(node: XmlNode | undefined): string {
  if (!node) return '';
  return join(node.children.map(convert)).trim();
}

function delimiter(ch: string | undefined, fallback: string): string {
  const c = ch ?? fallback;
  return DELIMS[c] ?? c;
}

function convert(node: XmlNode): string {
  switch (node.local) {
    case '#text':
      return '';
    case 'r': {
      const literal = child(child(node, 'rPr'), 'nor') !== undefined;
      const text = runText(node);
      return literal ? text : [...text].map(escapeChar).join('');
    }
    case 'f': {
      const type = val(child(child(node, 'fPr'), 'type'));
      const num = arg(child(node, 'num'));
      const den = arg(child(node, 'den'));
      if (type === 'noBar') return `\\genfrac{}{}{0pt}{}{${num}}{${den}}`;
      if (type === 'lin') return `${base(num)}/${base(den)}`;
      return `\\frac{${num}}{${den}}`;
    }
    case 'sSup':
      return `${base(arg(child(node, 'e')))}^{${arg(child(node, 'sup'))}}`;
    case 'sSub':
      return `${base(arg(child(node, 'e')))}_{${arg(child(node, 'sub'))}}`;
    case 'sSubSup':
      return `${base(arg(child(node, 'e')))}_{${arg(child(node, 'sub'))}}^{${arg(child(node, 'sup'))}}`;
    case 'sPre':
      return `{}${limits(arg(child(node, 'sub')), arg(child(node, 'sup')))}${base(arg(child(node, 'e')))}`;
    case 'rad': {
      const pr = child(node, 'radPr');
      const deg = isOn(child(pr, 'degHide')) ? '' : arg(child(node, 'deg'));
      const e = arg(child(node, 'e'));
      return deg ? `\\sqrt[${deg}]{${e}}` : `\\sqrt{${e}}`;
    }
    case 'nary': {
      const pr = child(node, 'naryPr');
      const chr = val(child(pr, 'chr')) ?? '∫';
      const op = NARY[chr] ?? (SYMBOLS[chr] || chr);
      const sub = isOn(child(pr, 'subHide')) ? '' : arg(child(node, 'sub'));
      const sup = isOn(child(pr, 'supHide')) ? '' : arg(child(node, 'sup'));
      return join([op, limits(sub, sup), arg(child(node, 'e'))]);
    }
    case 'd': {
      const pr = child(node, 'dPr');
      const open = delimiter(val(child(pr, 'begChr')), '(');
      const close = delimiter(val(child(pr, 'endChr')), ')');
      const sep = delimiter(val(child(pr, 'sepChr')), '|');
      const inner = children(node, 'e').map(arg).join(sep === '.' ? ' ' : sep);
      return `\\left${open}${inner}\\right${close}`;
    }
    case 'func': {
      const fName = child(node, 'fName');
      const name = plainText(fName);
      const head = name !== null && /^[A-Za-z]+$/.test(name.trim()) ? operatorName(name.trim()) : arg(fName);
      return join([head, arg(child(node, 'e'))]);
    }
    case 'limLow':
    case 'limUpp': {
      const e = child(node, 'e');
      const lim = arg(child(node, 'lim'));
      const name = plainText(e)?.trim();
      if (name && /^[A-Za-z]+$/.test(name)) {
        return `${operatorName(name)}${node.local === 'limLow' ? '_' : '^'}{${lim}}`;
      }
      const body = arg(e);
      const onlyGroup = e?.children.filter((c) => c.local !== '#text' && !c.local.endsWith('Pr')) ?? [];
      if (node.local === 'limLow' && onlyGroup.length === 1 && onlyGroup[0].local === 'groupChr') return `${body}_{${lim}}`;
      return node.local === 'limLow' ? `\\underset{${lim}}{${body}}` : `\\overset{${lim}}{${body}}`;
    }
    case 'groupChr': {
      const pr = child(node, 'groupChrPr');
      const chr = val(child(pr, 'chr')) ?? '\u23df';
      const top = val(child(pr, 'pos')) === 'top';
      const e = arg(child(node, 'e'));
      if (chr === '\u23df') return `\\underbrace{${e}}`;
      if (chr === '\u23de') return `\\overbrace{${e}}`;
      const mark = escapeChar(chr).trim();
      return top ? `\\overset{${mark}}{${e}}` : `\\underset{${mark}}{${e}}`;
    }
    case 'acc': {
      const chr = val(child(child(node, 'accPr'), 'chr')) ?? '\u0302';
      return `${ACCENTS[chr] ?? '\\hat'}{${arg(child(node, 'e'))}}`;
    }
    case 'bar': {
      const top = val(child(child(node, 'barPr'), 'pos')) === 'top';
      return `${top ? '\\overline' : '\\underline'}{${arg(child(node, 'e'))}}`;
    }
    case 'borderBox':
      return `\\boxed{${arg(child(node, 'e'))}}`;
    case 'eqArr':
      return children(node, 'e').map(arg).join(' \\\\ ');
    case 'm': {
      const rows = children(node, 'mr').map((mr) => children(mr, 'e').map(arg).join(' & '));
      return `\\begin{matrix}${rows.join(' \\\\ ')}\\end{matrix}`;
    }
    case 'oMath':
    case 'e':
    case 'box':
    case 'phant':
    case 'num':
    case 'den':
    case 'sub':
    case 'sup':
    case 'lim':
    case 'deg':
    case 'fName':
      return arg(node.local === 'box' || node.local === 'phant' ? child(node, 'e') : node);
    default:
      // Property elements carry formatting only; anything else unknown still yields its text.
      if (node.local.endsWith('Pr')) return '';
      return join(node.children.map(convert));
  }
}

/** LaTeX-style text of an m:oMath or m:oMathPara element (several equations joined by \\). */
export function ommlToLatex(node: XmlNode): string {
  const parts = node.local === 'oMathPara' ? children(node, 'oMath').map((m) => convert(m)) : [convert(node)];
  return parts
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join(' \\\\ ');
}
