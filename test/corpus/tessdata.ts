/**
 * The tesseract traineddata folder the corpus OCR tests read other languages and orientation data
 * from: TESSDATA_DIR, else Debian's (tesseract-ocr-jpn, -jpn-vert, -chi-sim, -kor, -osd packages;
 * .ci/run installs them). Missing files fail the file at import with what to install.
 */
import fs from 'node:fs';
import path from 'node:path';

const dir = path.resolve(process.env.TESSDATA_DIR || '/usr/share/tesseract-ocr/5/tessdata');
const NEEDED = ['osd', 'jpn', 'jpn_vert', 'chi_sim', 'kor'];
const missing = NEEDED.filter((l) => !fs.existsSync(path.join(dir, `${l}.traineddata`)));
if (missing.length) {
  throw new Error(
    `Tesseract data missing in ${dir}: ${missing.join(', ')}. Install Debian's tesseract-ocr-osd, tesseract-ocr-jpn, ` +
      'tesseract-ocr-jpn-vert, tesseract-ocr-chi-sim and tesseract-ocr-kor, or set TESSDATA_DIR to a folder holding them.',
  );
}

export const TESSDATA_DIR = dir;
