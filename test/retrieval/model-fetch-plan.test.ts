import t from 'tap';
import path from 'node:path';
import { parseFetchArgs, planFetch } from '../../scripts/fetch-models.ts';

// Only the planning is tested: the script itself downloads from the internet.
t.test('default plan: three models, quantized weights, hub URLs into the MODELS_DIR layout', async (t) => {
  const args = parseFetchArgs([], '/srv/models');
  t.same(args, { modelsDir: '/srv/models', roles: ['fast', 'accurate', 'reranker'], dtype: 'q8', hubUrl: 'https://huggingface.co' });
  const plan = planFetch(args);
  t.equal(plan.length, 12);
  t.same(plan.slice(0, 4), [
    { repo: 'Xenova/all-MiniLM-L6-v2', file: 'config.json', url: 'https://huggingface.co/Xenova/all-MiniLM-L6-v2/resolve/main/config.json', dest: path.join('/srv/models', 'Xenova/all-MiniLM-L6-v2/config.json') },
    { repo: 'Xenova/all-MiniLM-L6-v2', file: 'tokenizer.json', url: 'https://huggingface.co/Xenova/all-MiniLM-L6-v2/resolve/main/tokenizer.json', dest: path.join('/srv/models', 'Xenova/all-MiniLM-L6-v2/tokenizer.json') },
    { repo: 'Xenova/all-MiniLM-L6-v2', file: 'tokenizer_config.json', url: 'https://huggingface.co/Xenova/all-MiniLM-L6-v2/resolve/main/tokenizer_config.json', dest: path.join('/srv/models', 'Xenova/all-MiniLM-L6-v2/tokenizer_config.json') },
    { repo: 'Xenova/all-MiniLM-L6-v2', file: 'onnx/model_quantized.onnx', url: 'https://huggingface.co/Xenova/all-MiniLM-L6-v2/resolve/main/onnx/model_quantized.onnx', dest: path.join('/srv/models', 'Xenova/all-MiniLM-L6-v2/onnx/model_quantized.onnx') },
  ]);
  t.same([...new Set(plan.map((p) => p.repo))], ['Xenova/all-MiniLM-L6-v2', 'Xenova/bge-small-en-v1.5', 'Xenova/ms-marco-MiniLM-L-6-v2']);
});

t.test('options: subset, fp32, other models dir and hub', async (t) => {
  const args = parseFetchArgs(['--only', 'reranker', '--dtype', 'fp32', '--models-dir', '/m', '--hub', 'https://mirror.example/'], '/ignored');
  const plan = planFetch(args);
  t.same(plan.map((p) => p.url), [
    'https://mirror.example/Xenova/ms-marco-MiniLM-L-6-v2/resolve/main/config.json',
    'https://mirror.example/Xenova/ms-marco-MiniLM-L-6-v2/resolve/main/tokenizer.json',
    'https://mirror.example/Xenova/ms-marco-MiniLM-L-6-v2/resolve/main/tokenizer_config.json',
    'https://mirror.example/Xenova/ms-marco-MiniLM-L-6-v2/resolve/main/onnx/model.onnx',
  ]);
  t.equal(plan[3].dest, path.join('/m', 'Xenova/ms-marco-MiniLM-L-6-v2/onnx/model.onnx'));
});

t.test('bad options are refused with the accepted values', async (t) => {
  t.throws(() => parseFetchArgs(['--dtype', 'int4'], '/m'), /--dtype must be q8 or fp32, got int4/);
  t.throws(() => parseFetchArgs(['--only', 'fast,huge'], '/m'), /--only takes fast, accurate, reranker; got huge/);
  t.throws(() => parseFetchArgs(['--models-dir'], '/m'), /--models-dir needs a value/);
  t.throws(() => parseFetchArgs(['--force'], '/m'), /unknown option --force/);
});
