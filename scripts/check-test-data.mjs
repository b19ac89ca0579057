// Runs before the corpus suite: one clear message and exit 1 when CORPUS_DIR or EVAL_DIR is missing.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
let missing = 0;
for (const [name, fallback] of [['CORPUS_DIR', '../shared/corpus'], ['EVAL_DIR', '../shared/eval']]) {
  const dir = path.resolve(root, process.env[name] || fallback);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    console.error(`test:corpus: ${name} not found (${dir}). Set ${name} to the folder of the shared test data; \`npm test\` needs neither.`);
    missing++;
  }
}
process.exit(missing ? 1 : 0);
