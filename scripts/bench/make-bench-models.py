#!/usr/bin/python3
"""Builds random-weight ONNX models with exactly the architectures of the three models the server
uses, for benchmarks (compute does not depend on weight values):

  all-MiniLM-L6-v2         6 layers, hidden 384, 12 heads, intermediate 1536, mean pooling
  bge-small-en-v1.5       12 layers, hidden 384, 12 heads, intermediate 1536, CLS pooling
  ms-marco-MiniLM-L-6-v2   6 layers, hidden 384, 12 heads, intermediate 1536, classifier (1 logit)

all with a 30,522-entry WordPiece vocabulary, 512 positions, 2 token types, in the MODELS_DIR layout
the model layer reads (<out>/Xenova/<name>/{config.json, tokenizer.json, tokenizer_config.json,
onnx/model.onnx, onnx/model_quantized.onnx}).

The graph follows what a PyTorch BERT export looks like (MatMul + Add projections, Reshape /
Transpose heads, scaled dot-product attention with an additive mask, LayerNormalization, erf GELU).

Quantized files follow what onnxruntime's quantize_dynamic (IntegerOps mode, default QInt8 weights,
MatMulConstBOnly) writes, which is what the published model_quantized.onnx files are:
  - every MatMul with a constant weight: DynamicQuantizeLinear on the activation (uint8, per-tensor
    scale + zero point computed at run time) -> MatMulInteger with int8 per-channel weights ->
    Cast to float -> Mul by activation scale x weight scales; onnxruntime fuses this at load time
    into its DynamicQuantizeMatMul / MatMulIntegerToFloat kernels, as it does for real models;
  - the three embedding tables: Gather on int8 data, then DequantizeLinear;
  - attention score and context MatMuls (activation x activation) stay float, as quantize_dynamic
    leaves them.

The vocabulary is made of real English: the most frequent words of the SciFact corpus (BERT
normalisation: lower case, accents stripped, punctuation split off) plus the most frequent "##"
continuation pieces, so WordPiece token counts per text are realistic.

Run with Debian's python (it has python3-onnx):
  /usr/bin/python3 scripts/bench/make-bench-models.py [out_dir] [--corpus ../shared/eval/scifact/corpus.jsonl]
"""
import argparse
import collections
import importlib.util
import json
import math
import os
import sys
import unicodedata

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def _load_test_models():
    """The tokenizer pieces are shared with the tiny test-model generator (its file name has a dash)."""
    spec = importlib.util.spec_from_file_location('make_test_models', os.path.join(ROOT, 'scripts', 'make-test-models.py'))
    module = importlib.util.module_from_spec(spec)
    argv, sys.argv = sys.argv, sys.argv[:1]  # its OUT default reads argv[1]
    try:
        spec.loader.exec_module(module)
    finally:
        sys.argv = argv
    return module


_TEST_MODELS = _load_test_models()
is_punct = _TEST_MODELS.is_punct
tokenizer_json = _TEST_MODELS.tokenizer_json
TOKENIZER_CONFIG = _TEST_MODELS.TOKENIZER_CONFIG
OPSET = 17
VOCAB_SIZE = 30522
MAX_POS = 512

MODELS = {
    'Xenova/all-MiniLM-L6-v2': dict(layers=6, hidden=384, heads=12, inter=1536, classifier=False, seed=1, pooling='mean'),
    'Xenova/bge-small-en-v1.5': dict(layers=12, hidden=384, heads=12, inter=1536, classifier=False, seed=2, pooling='cls'),
    'Xenova/ms-marco-MiniLM-L-6-v2': dict(layers=6, hidden=384, heads=12, inter=1536, classifier=True, seed=3, pooling=None),
}

# ---------------------------------------------------------------- vocabulary


def bert_words(text):
    """BERT basic tokenisation: lower case, strip accents, split on whitespace and punctuation."""
    text = unicodedata.normalize('NFD', text.lower())
    text = ''.join(ch for ch in text if unicodedata.category(ch) != 'Mn')
    words, cur = [], []
    for ch in text:
        if ch.isspace():
            if cur:
                words.append(''.join(cur))
                cur = []
        elif is_punct(ch):
            if cur:
                words.append(''.join(cur))
                cur = []
            words.append(ch)
        else:
            cur.append(ch)
    if cur:
        words.append(''.join(cur))
    return words


def build_vocab(corpus_path):
    """30,522 tokens laid out like bert-base-uncased: [PAD], [unused*], [UNK] [CLS] [SEP] [MASK], chars, words, ## pieces."""
    vocab = ['[PAD]'] + [f'[unused{i}]' for i in range(99)] + ['[UNK]', '[CLS]', '[SEP]', '[MASK]']
    seen = set(vocab)

    def add(tok):
        if tok not in seen and len(vocab) < VOCAB_SIZE:
            seen.add(tok)
            vocab.append(tok)

    for c in range(33, 127):
        ch = chr(c)
        if not ch.isupper():
            add(ch)
    for c in 'abcdefghijklmnopqrstuvwxyz0123456789':
        add('##' + c)
    counts = collections.Counter()
    with open(corpus_path, encoding='utf-8') as f:
        for line in f:
            doc = json.loads(line)
            counts.update(bert_words(doc.get('title', '') + ' ' + doc.get('text', '')))
    # Characters seen in the corpus (Greek letters, symbols) as single tokens, like BERT's vocab.
    chars = collections.Counter()
    for w, n in counts.items():
        for ch in w:
            chars[ch] += n
    for ch, _ in chars.most_common(400):
        add(ch)
    # Whole words fill ~80% of the rest (bert-base-uncased: ~24k whole words, ~5.8k ## pieces).
    words_budget = int((VOCAB_SIZE - len(vocab)) * 0.8)
    words = [w for w, n in counts.most_common() if len(w) > 1 and len(w) <= 100]
    for w in words[:words_budget]:
        add(w)
    # ## pieces: suffixes (2-8 chars) of the words left out, weighted by frequency.
    in_vocab = set(vocab)
    pieces = collections.Counter()
    for w in words[words_budget:]:
        n = counts[w]
        for k in range(2, min(8, len(w) - 1) + 1):
            pieces['##' + w[-k:]] += n
        for k in range(2, min(8, len(w) - 1) + 1):
            if w[:k] not in in_vocab:
                pieces[w[:k]] += n
    for p, _ in pieces.most_common():
        if len(vocab) >= VOCAB_SIZE:
            break
        add(p)
    i = 0
    while len(vocab) < VOCAB_SIZE:  # only if the corpus is tiny
        add(f'[unused{99 + i}]')
        i += 1
    assert len(vocab) == VOCAB_SIZE, len(vocab)
    return {tok: i for i, tok in enumerate(vocab)}


def config_json(repo, cfg):
    c = {
        'model_type': 'bert', 'hidden_size': cfg['hidden'], 'num_attention_heads': cfg['heads'],
        'num_hidden_layers': cfg['layers'], 'intermediate_size': cfg['inter'], 'hidden_act': 'gelu',
        'max_position_embeddings': MAX_POS, 'type_vocab_size': 2, 'vocab_size': VOCAB_SIZE, 'layer_norm_eps': 1e-12,
        'pad_token_id': 0, 'transformers_version': '4.40.0',
        '_note': 'random weights with the architecture of ' + repo + ', for benchmarks only',
    }
    if cfg['classifier']:
        c['architectures'] = ['BertForSequenceClassification']
        c['id2label'] = {'0': 'LABEL_0'}
        c['label2id'] = {'LABEL_0': 0}
    else:
        c['architectures'] = ['BertModel']
    return c

# ---------------------------------------------------------------- graph


class Graph:
    def __init__(self, quantized, rng):
        self.nodes, self.inits, self.quantized, self.rng, self.n = [], [], quantized, rng, 0

    def name(self, base):
        self.n += 1
        return f'{base}_{self.n}'

    def const(self, base, arr):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(self, op_type, inputs, base=None, outputs=1, **attrs):
        outs = [self.name(base or op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, **attrs))
        return outs[0] if outputs == 1 else outs

    def rand(self, *shape, scale):
        return (self.rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float32)

    def embedding(self, base, rows, dim, ids):
        table = self.rand(rows, dim, scale=0.05)
        if not self.quantized:
            return self.op('Gather', [self.const(base, table), ids])
        # GatherQuant: int8 table, gather, then dequantize the gathered rows.
        scale = np.float32(max(np.abs(table).max(), 1e-8) / 127.0)
        q = np.clip(np.round(table / scale), -127, 127).astype(np.int8)
        g = self.op('Gather', [self.const(base + '_quantized', q), ids])
        return self.op('DequantizeLinear', [g, self.const(base + '_scale', np.array(scale, np.float32)),
                                            self.const(base + '_zero_point', np.array(0, np.int8))])

    def linear(self, x, n_in, n_out, base):
        w = self.rand(n_in, n_out, scale=1 / math.sqrt(n_in))
        b = self.rand(n_out, scale=0.02)
        if not self.quantized:
            y = self.op('MatMul', [x, self.const(base + '_weight', w)])
        else:
            # Per-output-channel symmetric int8 weights; activations quantized per call (uint8).
            ws = (np.maximum(np.abs(w).max(axis=0), 1e-8) / 127.0).astype(np.float32)
            wq = np.clip(np.round(w / ws), -127, 127).astype(np.int8)
            xq, xs, xzp = self.op('DynamicQuantizeLinear', [x], base + '_quant', outputs=3)
            mm = self.op('MatMulInteger', [xq, self.const(base + '_weight_quantized', wq), xzp,
                                           self.const(base + '_weight_zero_point', np.zeros(n_out, np.int8))])
            scale = self.op('Mul', [xs, self.const(base + '_weight_scale', ws)])
            y = self.op('Mul', [self.op('Cast', [mm], to=TensorProto.FLOAT), scale])
        return self.op('Add', [y, self.const(base + '_bias', b)])

    def layer_norm(self, x, dim):
        g = (1 + self.rand(dim, scale=0.05)).astype(np.float32)
        return self.op('LayerNormalization', [x, self.const('ln_weight', g), self.const('ln_bias', self.rand(dim, scale=0.05))],
                       axis=-1, epsilon=1e-12)


def build_model(cfg, quantized):
    rng = np.random.default_rng(cfg['seed'])
    g = Graph(quantized, rng)
    H, nh, inter = cfg['hidden'], cfg['heads'], cfg['inter']
    dh = H // nh
    i64 = lambda *v: np.array(v, np.int64)
    shape = g.op('Shape', ['input_ids'])
    batch = g.op('Gather', [shape, g.const('zero', np.array(0, np.int64))], axis=0)
    seq = g.op('Gather', [shape, g.const('one', np.array(1, np.int64))], axis=0)
    pos_ids = g.op('Unsqueeze', [g.op('Range', [g.const('start', np.array(0, np.int64)), seq, g.const('delta', np.array(1, np.int64))]),
                                 g.const('axes0', i64(0))])
    x = g.op('Add', [g.embedding('word_embeddings', VOCAB_SIZE, H, 'input_ids'), g.embedding('token_type_embeddings', 2, H, 'token_type_ids')])
    x = g.op('Add', [x, g.embedding('position_embeddings', MAX_POS, H, pos_ids)])
    x = g.layer_norm(x, H)
    # Extended attention mask: (1 - mask) * float32 min, broadcast over heads and query positions.
    mask = g.op('Cast', [g.op('Unsqueeze', ['attention_mask', g.const('axes12', i64(1, 2))])], to=TensorProto.FLOAT)
    bias = g.op('Mul', [g.op('Sub', [g.const('one_f', np.array(1.0, np.float32)), mask]),
                        g.const('fmin', np.array(np.finfo(np.float32).min, np.float32))])
    # Head split / merge shapes are built from the input shape, as a PyTorch export does.
    unsq = lambda t: g.op('Unsqueeze', [t, g.const('axes', i64(0))])
    heads_shape = g.op('Concat', [unsq(batch), unsq(seq), g.const('nh', i64(nh)), g.const('dh', i64(dh))], axis=0)
    merge_shape = g.op('Concat', [unsq(batch), unsq(seq), g.const('H', i64(H))], axis=0)
    for _ in range(cfg['layers']):
        split = lambda t, perm: g.op('Transpose', [g.op('Reshape', [t, heads_shape])], perm=perm)
        q = split(g.linear(x, H, H, 'query'), [0, 2, 1, 3])
        k = split(g.linear(x, H, H, 'key'), [0, 2, 3, 1])
        v = split(g.linear(x, H, H, 'value'), [0, 2, 1, 3])
        scores = g.op('Add', [g.op('Div', [g.op('MatMul', [q, k]), g.const('sqrt_dh', np.array(math.sqrt(dh), np.float32))]), bias])
        ctx = g.op('MatMul', [g.op('Softmax', [scores], axis=-1), v])
        ctx = g.op('Reshape', [g.op('Transpose', [ctx], perm=[0, 2, 1, 3]), merge_shape])
        x = g.layer_norm(g.op('Add', [g.linear(ctx, H, H, 'attention_output'), x]), H)
        h = g.linear(x, H, inter, 'intermediate')
        erf = g.op('Erf', [g.op('Div', [h, g.const('sqrt2', np.array(math.sqrt(2), np.float32))])])
        gelu = g.op('Mul', [g.op('Mul', [h, g.op('Add', [erf, g.const('one_g', np.array(1.0, np.float32))])]),
                            g.const('half', np.array(0.5, np.float32))])
        x = g.layer_norm(g.op('Add', [g.linear(gelu, inter, H, 'output'), x]), H)
    vi = helper.make_tensor_value_info
    inputs = [vi(n, TensorProto.INT64, ['batch_size', 'sequence_length']) for n in ('input_ids', 'attention_mask', 'token_type_ids')]
    if cfg['classifier']:
        cls = g.op('Gather', [x, g.const('cls_index', np.array(0, np.int64))], axis=1)
        pooled = g.op('Tanh', [g.linear(cls, H, H, 'pooler')])
        g.nodes.append(helper.make_node('Identity', [g.linear(pooled, H, 1, 'classifier')], ['logits']))
        outputs = [vi('logits', TensorProto.FLOAT, ['batch_size', 1])]
    else:
        g.nodes.append(helper.make_node('Identity', [x], ['last_hidden_state']))
        outputs = [vi('last_hidden_state', TensorProto.FLOAT, ['batch_size', 'sequence_length', H])]
    graph = helper.make_graph(g.nodes, 'bert', inputs, outputs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', OPSET)], producer_name='make-bench-models')
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out', nargs='?', default=os.path.join(ROOT, 'data', 'bench-models'))
    ap.add_argument('--corpus', default=os.path.join(ROOT, '..', 'shared', 'eval', 'scifact', 'corpus.jsonl'))
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    vocab = build_vocab(args.corpus)
    tok = tokenizer_json(vocab)
    for repo, cfg in MODELS.items():
        d = os.path.join(out, *repo.split('/'))
        os.makedirs(os.path.join(d, 'onnx'), exist_ok=True)
        with open(os.path.join(d, 'config.json'), 'w') as f:
            json.dump(config_json(repo, cfg), f, indent=1)
        with open(os.path.join(d, 'tokenizer.json'), 'w') as f:
            json.dump(tok, f, ensure_ascii=False)
        with open(os.path.join(d, 'tokenizer_config.json'), 'w') as f:
            json.dump(TOKENIZER_CONFIG, f, indent=1)
        for quantized, name in ((False, 'model.onnx'), (True, 'model_quantized.onnx')):
            path = os.path.join(d, 'onnx', name)
            tmp = path + '.tmp'
            onnx.save(build_model(cfg, quantized), tmp)
            os.replace(tmp, path)
            print(f'{repo}/onnx/{name}: {os.path.getsize(path) / 1e6:.1f} MB', file=sys.stderr)
    with open(os.path.join(out, 'README.txt'), 'w') as f:
        f.write('Random-weight models with the architectures of the real ones, for `npm run bench` only.\n'
                'Generated by scripts/bench/make-bench-models.py; never use them for retrieval.\n')
    print(out)


if __name__ == '__main__':
    main()
