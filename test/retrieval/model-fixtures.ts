/** Paths and expected outputs of the tiny generated models (scripts/make-test-models.py). */
import fs from 'node:fs';
import path from 'node:path';

export const MODELS_FIXTURE_DIR = path.resolve(import.meta.dirname, '../fixtures/models');

interface EmbedOutputs {
  passage: number[][];
  query?: number[][];
  input_ids: number[][];
}

export interface ExpectedModels {
  texts: string[];
  query: string;
  passages: string[];
  bge_instruction: string;
  models: {
    fast: { repo: string; dimension: number; max_length: number; outputs: { q8: EmbedOutputs; fp32: EmbedOutputs } };
    accurate: { repo: string; dimension: number; max_length: number; outputs: { fp32: EmbedOutputs } };
    reranker: { repo: string; dimension: number; max_length: number; outputs: { q8: { logits: number[]; input_ids: number[][] } } };
  };
}

export const EXPECTED: ExpectedModels = JSON.parse(fs.readFileSync(path.join(MODELS_FIXTURE_DIR, 'expected.json'), 'utf8'));

export const fixtureDir = (repo: string) => path.join(MODELS_FIXTURE_DIR, ...repo.split('/'));

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
