/**
 * One real paragraph per case, none of them in the evaluation sample (scripts/data): the detector
 * must name each required language, and with a confident score.
 */
import t from 'tap';
import { detectLanguage } from '../../src/language/detect.ts';
import { REQUIRED_LANGUAGES, languageName } from '../../src/language/languages.ts';

const PARAGRAPHS: Record<string, string[]> = {
  en: [
    'The museum will open a new exhibition on ancient Egypt next spring, with more than two hundred objects on loan from collections around the world.',
    'Our team meets every Monday morning to review the previous week and plan the tasks for the days ahead.',
  ],
  es: [
    'El equipo local ganó el partido por dos goles a uno gracias a un penalti en el último minuto.',
    'Los médicos recomiendan beber suficiente agua durante el verano, sobre todo a las personas mayores y a los niños pequeños.',
  ],
  pt: [
    'O time da casa venceu a partida por dois a um graças a um pênalti no último minuto.',
    'Os médicos recomendam beber bastante água durante o verão, sobretudo os idosos e as crianças pequenas.',
  ],
  it: [
    "La squadra di casa ha vinto la partita per due a uno grazie a un rigore all'ultimo minuto.",
    "I medici consigliano di bere molta acqua durante l'estate, soprattutto agli anziani e ai bambini piccoli.",
  ],
  fr: [
    "L'équipe locale a remporté le match deux buts à un grâce à un penalty à la dernière minute.",
    "Les médecins recommandent de boire beaucoup d'eau pendant l'été, surtout aux personnes âgées et aux jeunes enfants.",
  ],
  de: [
    'Die Heimmannschaft gewann das Spiel dank eines Elfmeters in der letzten Minute mit zwei zu eins.',
    'Ärzte empfehlen, im Sommer viel Wasser zu trinken, vor allem älteren Menschen und kleinen Kindern.',
  ],
  nl: [
    'Het thuisteam won de wedstrijd met twee tegen één dankzij een strafschop in de laatste minuut.',
    'Artsen raden aan om in de zomer veel water te drinken, vooral aan ouderen en jonge kinderen.',
  ],
  ru: [
    'Местная команда выиграла матч со счётом два один благодаря пенальти на последней минуте.',
    'Врачи советуют летом пить больше воды, особенно пожилым людям и маленьким детям.',
  ],
  ar: [
    'فاز الفريق المحلي بالمباراة بهدفين مقابل هدف واحد بفضل ركلة جزاء في الدقيقة الأخيرة.',
    'ينصح الأطباء بشرب كمية كافية من الماء خلال فصل الصيف، خاصة لكبار السن والأطفال الصغار.',
  ],
  ur: [
    'مقامی ٹیم نے آخری منٹ میں پنالٹی کی بدولت میچ دو ایک سے جیت لیا۔',
    'ڈاکٹر مشورہ دیتے ہیں کہ گرمیوں میں زیادہ پانی پیا جائے، خاص طور پر بزرگوں اور چھوٹے بچوں کو۔',
  ],
  hi: [
    'स्थानीय टीम ने आख़िरी मिनट में पेनल्टी की बदौलत मैच दो-एक से जीत लिया।',
    'डॉक्टर सलाह देते हैं कि गर्मियों में ज़्यादा पानी पीना चाहिए, ख़ासकर बुज़ुर्गों और छोटे बच्चों को।',
  ],
  mr: [
    'स्थानिक संघाने शेवटच्या मिनिटाला मिळालेल्या पेनल्टीमुळे सामना दोन-एक असा जिंकला.',
    'डॉक्टरांच्या मते उन्हाळ्यात भरपूर पाणी प्यायला हवे, विशेषतः वृद्ध लोकांनी आणि लहान मुलांनी.',
  ],
  bn: [
    'স্থানীয় দল শেষ মিনিটে পেনাল্টির সুবাদে ম্যাচটি দুই-এক গোলে জিতেছে।',
    'চিকিৎসকেরা গরমের সময় বেশি করে পানি পান করার পরামর্শ দেন, বিশেষ করে বয়স্ক ও ছোট শিশুদের।',
  ],
  te: [
    'చివరి నిమిషంలో లభించిన పెనాల్టీ కారణంగా స్థానిక జట్టు మ్యాచ్‌ను రెండు-ఒకటి తేడాతో గెలిచింది.',
    'వేసవిలో ఎక్కువ నీరు తాగాలని వైద్యులు సూచిస్తున్నారు, ముఖ్యంగా వృద్ధులు మరియు చిన్న పిల్లలు.',
  ],
  ta: [
    'கடைசி நிமிடத்தில் கிடைத்த பெனால்டியால் உள்ளூர் அணி இரண்டுக்கு ஒன்று என்ற கணக்கில் வென்றது.',
    'கோடைக்காலத்தில் அதிக தண்ணீர் குடிக்குமாறு மருத்துவர்கள் அறிவுறுத்துகின்றனர், குறிப்பாக முதியவர்களும் சிறு குழந்தைகளும்.',
  ],
  ml: [
    'അവസാന മിനിറ്റിൽ ലഭിച്ച പെനാൽറ്റിയിലൂടെ പ്രാദേശിക ടീം മത്സരം ജയിച്ചു.',
    'വേനൽക്കാലത്ത് ധാരാളം വെള്ളം കുടിക്കണമെന്ന് ഡോക്ടർമാർ നിർദ്ദേശിക്കുന്നു, പ്രത്യേകിച്ച് പ്രായമായവരും കുട്ടികളും.',
  ],
  kn: [
    'ಕೊನೆಯ ನಿಮಿಷದಲ್ಲಿ ಸಿಕ್ಕ ಪೆನಾಲ್ಟಿಯಿಂದ ಸ್ಥಳೀಯ ತಂಡ ಪಂದ್ಯವನ್ನು ಗೆದ್ದಿತು.',
    'ಬೇಸಿಗೆಯಲ್ಲಿ ಹೆಚ್ಚು ನೀರು ಕುಡಿಯಬೇಕೆಂದು ವೈದ್ಯರು ಸಲಹೆ ನೀಡುತ್ತಾರೆ, ವಿಶೇಷವಾಗಿ ವಯಸ್ಸಾದವರು ಮತ್ತು ಚಿಕ್ಕ ಮಕ್ಕಳು.',
  ],
  gu: [
    'છેલ્લી મિનિટે મળેલી પેનલ્ટીને કારણે સ્થાનિક ટીમ મેચ બે-એકથી જીતી ગઈ.',
    'ડૉક્ટરો ઉનાળામાં વધુ પાણી પીવાની સલાહ આપે છે, ખાસ કરીને વૃદ્ધો અને નાનાં બાળકોને.',
  ],
  pa: [
    'ਆਖ਼ਰੀ ਮਿੰਟ ਵਿੱਚ ਮਿਲੀ ਪੈਨਲਟੀ ਸਦਕਾ ਸਥਾਨਕ ਟੀਮ ਨੇ ਮੈਚ ਦੋ-ਇੱਕ ਨਾਲ ਜਿੱਤ ਲਿਆ।',
    'ਡਾਕਟਰ ਸਲਾਹ ਦਿੰਦੇ ਹਨ ਕਿ ਗਰਮੀਆਂ ਵਿੱਚ ਵੱਧ ਪਾਣੀ ਪੀਣਾ ਚਾਹੀਦਾ ਹੈ, ਖ਼ਾਸ ਕਰਕੇ ਬਜ਼ੁਰਗਾਂ ਅਤੇ ਛੋਟੇ ਬੱਚਿਆਂ ਨੂੰ।',
  ],
  zh: ['主队凭借最后一分钟的点球，以二比一赢得了比赛。', '医生建议夏天多喝水，尤其是老年人和小孩子。'],
  ja: [
    '地元チームは最後の一分に得たペナルティキックで、二対一で試合に勝った。',
    '医師は、夏の間は水をたくさん飲むように勧めています。特に高齢者と小さな子どもは注意が必要です。',
  ],
  ko: [
    '홈팀은 마지막 1분에 얻은 페널티킥 덕분에 2대 1로 경기에서 이겼다.',
    '의사들은 여름철에 물을 충분히 마시라고 권한다. 특히 노인과 어린아이들은 주의해야 한다.',
  ],
};

t.test('every required language has test paragraphs', async (t) => {
  t.same(Object.keys(PARAGRAPHS).sort(), [...REQUIRED_LANGUAGES].sort());
});

for (const [code, paragraphs] of Object.entries(PARAGRAPHS)) {
  t.test(`${code}: ${languageName(code)}`, async (t) => {
    for (const paragraph of paragraphs) {
      const result = detectLanguage(paragraph);
      t.equal(result.language_code, code, paragraph.slice(0, 40));
      t.equal(result.language_name, languageName(code));
      t.ok(result.confidence >= 0.5 && result.confidence <= 1, `confident (${result.confidence})`);
    }
  });
}

t.test('close pairs are told apart on the same sentence', async (t) => {
  const pairs: [string, string][] = [
    ['es', 'El tren sale a las ocho de la mañana desde la estación central.'],
    ['pt', 'O trem sai às oito horas da manhã da estação central.'],
    ['it', 'Il treno parte alle otto del mattino dalla stazione centrale.'],
    ['nl', 'De trein vertrekt om acht uur in de ochtend vanaf het centraal station.'],
    ['de', 'Der Zug fährt um acht Uhr morgens vom Hauptbahnhof ab.'],
    ['hi', 'ट्रेन सुबह आठ बजे मुख्य स्टेशन से रवाना होती है।'],
    ['mr', 'गाडी सकाळी आठ वाजता मुख्य स्थानकावरून सुटते आणि दुपारी पोहोचते.'],
    ['ur', 'ٹرین صبح آٹھ بجے مرکزی اسٹیشن سے روانہ ہوتی ہے۔'],
    ['ar', 'يغادر القطار في الساعة الثامنة صباحا من المحطة المركزية.'],
    ['zh', '火车早上八点从中央车站出发。'],
    ['ja', '電車は朝八時に中央駅を出発します。'],
  ];
  for (const [code, sentence] of pairs) t.equal(detectLanguage(sentence).language_code, code, sentence);
});
