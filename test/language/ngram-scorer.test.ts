/**
 * The language scorer gives eld's own scores: for every text, the languages with a score and each
 * score to the float, in the order eld's getScores() lists them. Sentences in the scripts the
 * detector serves, and seeded random texts built to reach every branch of eld's text processing
 * (apostrophes between words, digits, URLs, astral and lone surrogates, words over 70 bytes,
 * texts past eld's 1,000 characters and 380 bytes, letters whose lower case is longer).
 */
import t from 'tap';
import { eld } from 'eld/small';
import { languageScorer, loadFrom } from '../../src/language/eld-model.ts';
import { seededRandom } from '../seeded-random.ts';

const SENTENCES = [
  'The committee reviewed the annual report and agreed on new procedures.',
  'Der Ausschuss prüfte den Jahresbericht und stellte fest, dass die Verfahren wirken.',
  'El comité revisó el informe anual y acordó nuevos procedimientos.',
  "Ceci est un petit texte en français pour montrer la détection de l'idiome.",
  'Il comitato ha esaminato la relazione annuale e approvato le procedure.',
  'A comissão analisou o relatório anual e aprovou os novos procedimentos.',
  'De commissie heeft het jaarverslag besproken en nieuwe procedures goedgekeurd.',
  'Komisja przeanalizowała roczne sprawozdanie i zatwierdziła nowe procedury.',
  'Výbor přezkoumal výroční zprávu a schválil nové postupy.',
  'Komitee vaatas läbi aastaaruande ja kiitis heaks uued menetlused.',
  'Valiokunta kävi läpi vuosikertomuksen ja hyväksyi uudet menettelyt.',
  'Bizottság áttekintette az éves jelentést és jóváhagyta az új eljárásokat.',
  'Komite yıllık raporu inceledi ve yeni prosedürleri onayladı.',
  'Ủy ban đã xem xét báo cáo thường niên và phê duyệt các thủ tục mới.',
  'Комитет рассмотрел годовой отчёт и утвердил новые процедуры.',
  'Комітет розглянув річний звіт і затвердив нові процедури.',
  'Комитетът разгледа годишния доклад и одобри новите процедури.',
  'Камітэт разгледзеў гадавую справаздачу і зацвердзіў новыя працэдуры.',
  'Комитет је размотрио годишњи извештај и одобрио нове процедуре.',
  'اللجنة راجعت التقرير السنوي ووافقت على الإجراءات الجديدة.',
  'کمیته گزارش سالانه را بررسی کرد و روش‌های جدید را تصویب کرد.',
  'کمیٹی نے سالانہ رپورٹ کا جائزہ لیا اور نئے طریقہ کار کی منظوری دی۔',
  'समिति ने वार्षिक रिपोर्ट की समीक्षा की और नई प्रक्रियाओं को मंजूरी दी।',
  'समितीने वार्षिक अहवालाचा आढावा घेतला आणि नवीन प्रक्रियांना मान्यता दिली.',
  'Η επιτροπή εξέτασε την ετήσια έκθεση και ενέκρινε τις νέες διαδικασίες.',
  'הוועדה בחנה את הדוח השנתי ואישרה את הנהלים החדשים.',
  '委员会审查了年度报告并批准了新的程序。',
  '委員会は年次報告書を検討し、新しい手続きを承認した。',
  '위원회는 연례 보고서를 검토하고 새로운 절차를 승인했다.',
  'คณะกรรมการได้ตรวจสอบรายงานประจำปีและอนุมัติขั้นตอนใหม่',
  'Visit https://example.com/docs or mail ops@example.com, v2.1 (2024) — thanks!',
  "don't won't it's l'homme d`accord rock ’n’ roll",
  'İSTANBUL ŞEHRİ ẞTRASSE ǅUNGLA',
  '😀 emoji 𝒳 astral 𐍈 gothic',
];

/** eld's scores as [code, score] pairs in getScores()'s order. */
function eldScores(text: string): Array<[string, number]> {
  return Object.entries(eld.detect(text).getScores() as Record<string, number>);
}

/** The scorer's, every language with a score, best first, ties in the table's language order. */
function ourScores(text: string, scorer = languageScorer()): Array<[string, number]> {
  const scores = scorer.scores(text);
  const out: Array<[string, number]> = [];
  for (let l = 0; l < scores.length; l++) if (scores[l] > 0) out.push([scorer.codes[l], scores[l]]);
  return out.sort((a, b) => b[1] - a[1]);
}

t.test("the scorer's scores are eld's on sentences in every script the detector serves", async (t) => {
  for (const text of SENTENCES) t.same(ourScores(text), eldScores(text), text);
  t.ok(eldScores(SENTENCES[0]).length > 10, 'eld scores many languages for a sentence');
});

t.test("without the build's JSON copy the scorer reads eld's own table, with the same scores", async (t) => {
  const fromModule = loadFrom(undefined);
  t.not(fromModule, languageScorer());
  for (const text of SENTENCES) t.same(ourScores(text, fromModule), eldScores(text), text);
});

t.test("the scorer's scores are eld's on seeded random texts", async (t) => {
  const rnd = seededRandom(23);
  const sentenceWords = SENTENCES.join(' ').split(/\s+/);
  const pieces = [
    ...sentenceWords,
    "'", '`', '’', "'s", "''", " ' ", '--', '...', '42', 'a1b2', 'www.example.org/x', 'http://a.b/c?d=e', 'x@y.com',
    '\ud83d\ude00', '\ud835\udcb3', '\ud800', '\udc00', 'İ', 'ẞ', 'ǅ', '\u00ad', '\u200b', '\t', '\n', '  ',
    'Pneumonoultramicroscopicsilicovolcanoconiosisfloccinaucinihilipilificationantidisestablishmentarianism',
    'ÄÖÜäöüßÄÖÜäöüßÄÖÜäöüßÄÖÜäöüßÄÖÜäöüßÄÖÜäöüßÄÖÜäöüß',
  ];
  let compared = 0;
  for (let i = 0; i < 3000; i++) {
    const parts: string[] = [];
    const n = 1 + rnd(i % 10 === 0 ? 400 : 30);
    for (let j = 0; j < n; j++) parts.push(pieces[rnd(pieces.length)]);
    const text = parts.join(rnd(4) === 0 ? '' : ' ');
    const expected = eldScores(text);
    const actual = ourScores(text);
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      t.same(actual, expected, JSON.stringify(text));
      return;
    }
    compared++;
  }
  t.equal(compared, 3000, 'every random text scored as eld scores it');
});
