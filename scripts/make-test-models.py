#!/usr/bin/python3
"""Builds tiny BERT-shaped ONNX models for the retrieval tests, in the MODELS_DIR layout:

  <out>/Xenova/all-MiniLM-L6-v2/      "fast" embedder   (onnx/model_quantized.onnx + onnx/model.onnx)
  <out>/Xenova/bge-small-en-v1.5/     "accurate" embedder (onnx/model.onnx only: exercises the fp32 fallback)
  <out>/Xenova/ms-marco-MiniLM-L-6-v2/ cross-encoder     (onnx/model_quantized.onnx)

each with config.json, tokenizer.json (WordPiece, BERT normaliser / pre-tokeniser) and
tokenizer_config.json. Weights are random with a fixed seed. The "quantized" graphs store their
matrices as int8 + scale and dequantize in-graph.

It also writes <out>/expected.json: outputs for fixed texts computed here with numpy only (our own
WordPiece tokenizer, forward pass, pooling, normalisation, truncation), so the TypeScript pipeline
(transformers.js tokenizer + onnxruntime + pooling + batching) is checked against an independent
implementation and can fail.

Run with Debian's python, which has python3-onnx:  /usr/bin/python3 scripts/make-test-models.py
"""
import json
import math
import os
import sys
import unicodedata

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'models'))

# ---------------------------------------------------------------- vocabulary and tokenizer

SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
WORDS = """the a an of to in and or is are was be for on with as by at from that this it not
document documents page pages table tables search query passage passages retrieval retrieve index
model models data result results report year revenue growth percent market cell cells protein
gene genes study studies patient patients risk cancer treatment effect effects quick brown fox
jumps over lazy dog dogs hello world represent sentence sentences searching relevant what how
which who when where why climate energy solar wind power water health vaccine virus""".split()
SUFFIXES = ['##s', '##es', '##ed', '##ing', '##ly', '##er', '##tion', '##al', '##able']
PUNCT = list('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')


def build_vocab():
    vocab = list(SPECIAL)
    vocab += PUNCT
    vocab += [chr(c) for c in range(ord('a'), ord('z') + 1)]
    vocab += [str(d) for d in range(10)]
    vocab += ['##' + chr(c) for c in range(ord('a'), ord('z') + 1)]
    vocab += ['##' + str(d) for d in range(10)]
    vocab += SUFFIXES
    for w in WORDS:
        if w not in vocab:
            vocab.append(w)
    return {tok: i for i, tok in enumerate(vocab)}


VOCAB = build_vocab()


def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith('P')


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def is_control(ch):
    if ch in '\t\n\r':
        return False
    return unicodedata.category(ch) in ('Cc', 'Cf')


def is_ws(ch):
    return ch in ' \t\n\r' or unicodedata.category(ch) == 'Zs'


def normalize(text):
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or is_control(ch):
            continue
        if is_ws(ch):
            out.append(' ')
        elif is_cjk(cp):
            out.append(' ' + ch + ' ')
        else:
            out.append(ch)
    text = ''.join(out)
    # lowercase=True with strip_accents unset strips accents too (BERT uncased behaviour)
    text = unicodedata.normalize('NFD', text.lower())
    return ''.join(ch for ch in text if unicodedata.category(ch) != 'Mn')


def pre_tokenize(text):
    words, cur = [], ''
    for ch in text:
        if is_ws(ch):
            if cur:
                words.append(cur)
            cur = ''
        elif is_punct(ch):
            if cur:
                words.append(cur)
            words.append(ch)
            cur = ''
        else:
            cur += ch
    if cur:
        words.append(cur)
    return words


def wordpiece(word):
    if len(word) > 100:
        return [VOCAB['[UNK]']]
    ids, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            piece = word[start:end] if start == 0 else '##' + word[start:end]
            if piece in VOCAB:
                found = VOCAB[piece]
                break
            end -= 1
        if found is None:
            return [VOCAB['[UNK]']]
        ids.append(found)
        start = end
    return ids


def tokenize(text):
    ids = []
    for w in pre_tokenize(normalize(text)):
        ids += wordpiece(w)
    return ids


CLS, SEP, PAD = VOCAB['[CLS]'], VOCAB['[SEP]'], VOCAB['[PAD]']


def encode_single(text, max_length):
    ids = tokenize(text)[: max_length - 2]
    return [CLS] + ids + [SEP], [0] * (len(ids) + 2)


def truncate_pair(n_a, n_b, budget):
    """Longest-first truncation as the Hugging Face tokenizers library does it: lengths to keep."""
    if n_a + n_b <= budget:
        return n_a, n_b
    swap = n_a > n_b
    n1, n2 = (n_b, n_a) if swap else (n_a, n_b)
    n2 = n1 if n1 > budget else max(n1, budget - n1)
    if n1 + n2 > budget:
        n1 = budget // 2
        n2 = n1 + budget % 2
    if swap:
        n1, n2 = n2, n1
    return min(n1, n_a), min(n2, n_b)


def encode_pair(a, b, max_length):
    ia, ib = tokenize(a), tokenize(b)
    ka, kb = truncate_pair(len(ia), len(ib), max_length - 3)
    ia, ib = ia[:ka], ib[:kb]
    return [CLS] + ia + [SEP] + ib + [SEP], [0] * (len(ia) + 2) + [1] * (len(ib) + 1)


def tokenizer_json(vocab=None):
    """tokenizer.json for a WordPiece vocab (this script's by default; the bench models pass theirs)."""
    vocab = VOCAB if vocab is None else vocab
    added = [dict(id=vocab[t], content=t, single_word=False, lstrip=False, rstrip=False, normalized=False, special=True)
             for t in SPECIAL]
    tok = lambda t: {'SpecialToken': {'id': t, 'type_id': 0}}
    seq = lambda s, type_id: {'Sequence': {'id': s, 'type_id': type_id}}
    return {
        'version': '1.0',
        'truncation': None,
        'padding': None,
        'added_tokens': added,
        'normalizer': {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True,
                       'strip_accents': None, 'lowercase': True},
        'pre_tokenizer': {'type': 'BertPreTokenizer'},
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [tok('[CLS]'), seq('A', 0), tok('[SEP]')],
            'pair': [tok('[CLS]'), seq('A', 0), tok('[SEP]'), seq('B', 1), {'SpecialToken': {'id': '[SEP]', 'type_id': 1}}],
            'special_tokens': {t: {'id': t, 'ids': [vocab[t]], 'tokens': [t]} for t in ('[CLS]', '[SEP]')},
        },
        'decoder': {'type': 'WordPiece', 'prefix': '##', 'cleanup': True},
        'model': {'type': 'WordPiece', 'unk_token': '[UNK]', 'continuing_subword_prefix': '##',
                  'max_input_chars_per_word': 100, 'vocab': vocab},
    }


TOKENIZER_CONFIG = {
    'tokenizer_class': 'BertTokenizer', 'do_lower_case': True, 'model_max_length': 512,
    'cls_token': '[CLS]', 'sep_token': '[SEP]', 'pad_token': '[PAD]', 'unk_token': '[UNK]', 'mask_token': '[MASK]',
    'tokenize_chinese_chars': True, 'strip_accents': None, 'clean_up_tokenization_spaces': True,
}

# ---------------------------------------------------------------- weights

MAX_POS = 512


def make_weights(seed, hidden, heads, layers, inter, classifier):
    rng = np.random.default_rng(seed)
    f = lambda *shape, scale=1.0: (rng.standard_normal(shape) * scale).astype(np.float32)
    w = {
        'word': f(len(VOCAB), hidden, scale=0.5),
        'pos': f(MAX_POS, hidden, scale=0.1),
        'type': f(2, hidden, scale=0.1),
        'emb_ln_g': (1 + f(hidden, scale=0.05)), 'emb_ln_b': f(hidden, scale=0.05),
        'layers': [],
    }
    s = 1 / math.sqrt(hidden)
    for _ in range(layers):
        w['layers'].append({
            'q': f(hidden, hidden, scale=s), 'bq': f(hidden, scale=0.02),
            'k': f(hidden, hidden, scale=s), 'bk': f(hidden, scale=0.02),
            'v': f(hidden, hidden, scale=s), 'bv': f(hidden, scale=0.02),
            'o': f(hidden, hidden, scale=s), 'bo': f(hidden, scale=0.02),
            'ln1_g': (1 + f(hidden, scale=0.05)), 'ln1_b': f(hidden, scale=0.05),
            'i': f(hidden, inter, scale=s), 'bi': f(inter, scale=0.02),
            'out': f(inter, hidden, scale=1 / math.sqrt(inter)), 'bout': f(hidden, scale=0.02),
            'ln2_g': (1 + f(hidden, scale=0.05)), 'ln2_b': f(hidden, scale=0.05),
        })
    if classifier:
        w['pool'] = f(hidden, hidden, scale=s)
        w['bpool'] = f(hidden, scale=0.02)
        w['cls'] = f(hidden, 1, scale=1.0)
        w['bcls'] = f(1, scale=0.1)
    return w


MATRICES = ('word', 'q', 'k', 'v', 'o', 'i', 'out', 'pool', 'cls')


def quantize(m):
    """Symmetric per-tensor int8; returns (int8 array, float32 scale)."""
    scale = np.float32(max(np.abs(m).max(), 1e-8) / 127.0)
    q = np.clip(np.round(m / scale), -127, 127).astype(np.int8)
    return q, scale


def dequantized(w):
    """The weights the quantized graph really computes with."""
    def deq(m):
        q, s = quantize(m)
        return (q.astype(np.float32) * s).astype(np.float32)
    out = {k: (deq(v) if k in MATRICES else v) for k, v in w.items() if k != 'layers'}
    out['layers'] = [{k: (deq(v) if k in MATRICES else v) for k, v in layer.items()} for layer in w['layers']]
    return out

# ---------------------------------------------------------------- ONNX graph


class Graph:
    def __init__(self, quantized):
        self.nodes, self.inits, self.quantized, self.n = [], [], quantized, 0

    def name(self, base):
        self.n += 1
        return f'{base}_{self.n}'

    def const(self, base, arr):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def weight(self, base, arr):
        if not self.quantized or base not in MATRICES:
            return self.const(base, arr)
        # Cast + Mul rather than DequantizeLinear: onnxruntime's extended optimisations rewrite
        # DequantizeLinear -> MatMul into integer kernels that also quantize the activations,
        # which would make the numpy reference below inexact.
        q, s = quantize(arr)
        qn = self.const(base + '_q', q)
        sn = self.const(base + '_scale', np.array(s, dtype=np.float32))
        return self.op('Mul', [self.op('Cast', [qn], to=TensorProto.FLOAT), sn], base)

    def op(self, op_type, inputs, base=None, **attrs):
        out = self.name(base or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def linear(self, x, w, b, base):
        return self.op('Add', [self.op('MatMul', [x, self.weight(base, w)]), self.const(base + '_b', b)])

    def layer_norm(self, x, g, b):
        return self.op('LayerNormalization', [x, self.const('ln_g', g), self.const('ln_b', b)], axis=-1, epsilon=1e-12)


def build_graph(w, cfg, quantized, classifier):
    g = Graph(quantized)
    H, nh = cfg['hidden'], cfg['heads']
    dh = H // nh
    word = g.op('Gather', [g.weight('word', w['word']), 'input_ids'])
    shape = g.op('Shape', ['input_ids'])
    seq_len = g.op('Squeeze', [g.op('Slice', [shape, g.const('one', np.array([1], np.int64)), g.const('two', np.array([2], np.int64))])])
    pos_ids = g.op('Range', [g.const('zero', np.array(0, np.int64)), seq_len, g.const('step', np.array(1, np.int64))])
    pos = g.op('Gather', [g.const('pos', w['pos']), pos_ids])
    typ = g.op('Gather', [g.const('type', w['type']), 'token_type_ids'])
    x = g.layer_norm(g.op('Add', [g.op('Add', [word, pos]), typ]), w['emb_ln_g'], w['emb_ln_b'])
    mask = g.op('Unsqueeze', [g.op('Cast', ['attention_mask'], to=TensorProto.FLOAT), g.const('axes', np.array([1, 2], np.int64))])
    bias = g.op('Mul', [g.op('Sub', [g.const('one_f', np.array(1.0, np.float32)), mask]), g.const('neg', np.array(-10000.0, np.float32))])
    heads_shape = g.const('heads_shape', np.array([0, 0, nh, dh], np.int64))
    merge_shape = g.const('merge_shape', np.array([0, 0, H], np.int64))
    for L in w['layers']:
        q = g.op('Transpose', [g.op('Reshape', [g.linear(x, L['q'], L['bq'], 'q'), heads_shape])], perm=[0, 2, 1, 3])
        k = g.op('Transpose', [g.op('Reshape', [g.linear(x, L['k'], L['bk'], 'k'), heads_shape])], perm=[0, 2, 3, 1])
        v = g.op('Transpose', [g.op('Reshape', [g.linear(x, L['v'], L['bv'], 'v'), heads_shape])], perm=[0, 2, 1, 3])
        scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, k]), g.const('scale', np.array(1 / math.sqrt(dh), np.float32))]), bias])
        ctx = g.op('MatMul', [g.op('Softmax', [scores], axis=-1), v])
        ctx = g.op('Reshape', [g.op('Transpose', [ctx], perm=[0, 2, 1, 3]), merge_shape])
        x = g.layer_norm(g.op('Add', [x, g.linear(ctx, L['o'], L['bo'], 'o')]), L['ln1_g'], L['ln1_b'])
        h = g.linear(x, L['i'], L['bi'], 'i')
        erf = g.op('Erf', [g.op('Div', [h, g.const('sqrt2', np.array(math.sqrt(2), np.float32))])])
        gelu = g.op('Mul', [g.op('Mul', [h, g.const('half', np.array(0.5, np.float32))]), g.op('Add', [erf, g.const('one_g', np.array(1.0, np.float32))])])
        x = g.layer_norm(g.op('Add', [x, g.linear(gelu, L['out'], L['bout'], 'out')]), L['ln2_g'], L['ln2_b'])
    ids = helper.make_tensor_value_info
    inputs = [ids(n, TensorProto.INT64, ['batch_size', 'sequence_length']) for n in ('input_ids', 'attention_mask', 'token_type_ids')]
    if classifier:
        cls = g.op('Gather', [x, g.const('cls_index', np.array(0, np.int64))], axis=1)
        pooled = g.op('Tanh', [g.linear(cls, w['pool'], w['bpool'], 'pool')])
        g.nodes.append(helper.make_node('Identity', [g.linear(pooled, w['cls'], w['bcls'], 'cls')], ['logits']))
        outputs = [ids('logits', TensorProto.FLOAT, ['batch_size', 1])]
    else:
        g.nodes.append(helper.make_node('Identity', [x], ['last_hidden_state']))
        outputs = [ids('last_hidden_state', TensorProto.FLOAT, ['batch_size', 'sequence_length', H])]
    graph = helper.make_graph(g.nodes, 'tiny_bert', inputs, outputs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', OPSET)], producer_name='make-test-models')
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model

# ---------------------------------------------------------------- numpy reference forward pass (float64)


def np_layer_norm(x, g, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def np_erf(x):
    return np.vectorize(math.erf)(x)


def np_forward(w, cfg, ids, types):
    """One sequence, no padding: returns hidden states [T, H]."""
    H, nh = cfg['hidden'], cfg['heads']
    dh = H // nh
    d = lambda a: np.asarray(a, dtype=np.float64)
    T = len(ids)
    x = d(w['word'])[ids] + d(w['pos'])[:T] + d(w['type'])[types]
    x = np_layer_norm(x, d(w['emb_ln_g']), d(w['emb_ln_b']))
    for L in w['layers']:
        proj = lambda name: (x @ d(L[name]) + d(L['b' + name])).reshape(T, nh, dh).transpose(1, 0, 2)
        q, k, v = proj('q'), proj('k'), proj('v')
        s = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        ctx = (p @ v).transpose(1, 0, 2).reshape(T, H)
        x = np_layer_norm(x + ctx @ d(L['o']) + d(L['bo']), d(L['ln1_g']), d(L['ln1_b']))
        h = x @ d(L['i']) + d(L['bi'])
        h = 0.5 * h * (1 + np_erf(h / math.sqrt(2)))
        x = np_layer_norm(x + h @ d(L['out']) + d(L['bout']), d(L['ln2_g']), d(L['ln2_b']))
    return x


def np_embed(w, cfg, text, pooling, max_length):
    ids, types = encode_single(text, max_length)
    hs = np_forward(w, cfg, ids, types)
    v = hs.mean(0) if pooling == 'mean' else hs[0]
    return (v / np.linalg.norm(v)).tolist(), ids


def np_rerank(w, cfg, query, passage, max_length):
    ids, types = encode_pair(query, passage, max_length)
    hs = np_forward(w, cfg, ids, types)
    pooled = np.tanh(hs[0] @ np.asarray(w['pool'], np.float64) + w['bpool'])
    return float((pooled @ np.asarray(w['cls'], np.float64) + w['bcls'])[0]), ids

# ---------------------------------------------------------------- output

LONG = ' '.join(['the zebra report on solar energy growth and market risk for patients in 2024'] * 40)
TEXTS = [
    'Hello, world!',
    'The QUICK brown fox — jumps over 13 lazy dogs.',
    'Café naïve résumé façade',
    'unbelievable tokenization of documents',
    '数据 retrieval and search',
    'a',
    LONG,
]
QUERY = 'what is the effect of solar power on growth?'
PASSAGES = [
    'Solar power growth was 40 percent in the report year.',
    'The quick brown fox jumps over the lazy dog.',
    'Vaccine studies in patients show a reduced risk of cancer.',
    LONG,
]

MODELS = {
    'fast': dict(repo='Xenova/all-MiniLM-L6-v2', seed=11, hidden=16, heads=2, layers=1, inter=32, pooling='mean',
                 files=['q8', 'fp32'], classifier=False, max_length=256),
    'accurate': dict(repo='Xenova/bge-small-en-v1.5', seed=22, hidden=24, heads=3, layers=2, inter=48, pooling='cls',
                     files=['fp32'], classifier=False, max_length=512),
    'reranker': dict(repo='Xenova/ms-marco-MiniLM-L-6-v2', seed=33, hidden=16, heads=2, layers=1, inter=32,
                     files=['q8'], classifier=True, max_length=512),
}
BGE_INSTRUCTION = 'Represent this sentence for searching relevant passages: '


def config_json(cfg):
    c = {
        'model_type': 'bert', 'hidden_size': cfg['hidden'], 'num_attention_heads': cfg['heads'],
        'num_hidden_layers': cfg['layers'], 'intermediate_size': cfg['inter'], 'hidden_act': 'gelu',
        'max_position_embeddings': MAX_POS, 'type_vocab_size': 2, 'vocab_size': len(VOCAB), 'layer_norm_eps': 1e-12,
        'pad_token_id': 0, 'transformers_version': '4.40.0', '_note': 'tiny random test model; not a real ' + cfg['repo'],
    }
    if cfg['classifier']:
        c['architectures'] = ['BertForSequenceClassification']
        c['id2label'] = {'0': 'LABEL_0'}
        c['label2id'] = {'LABEL_0': 0}
    else:
        c['architectures'] = ['BertModel']
    return c


def main():
    expected = {'vocab_size': len(VOCAB), 'texts': TEXTS, 'query': QUERY, 'passages': PASSAGES,
                'bge_instruction': BGE_INSTRUCTION, 'models': {}}
    for role, cfg in MODELS.items():
        d = os.path.join(OUT, *cfg['repo'].split('/'))
        os.makedirs(os.path.join(d, 'onnx'), exist_ok=True)
        for stale in os.listdir(os.path.join(d, 'onnx')):
            os.remove(os.path.join(d, 'onnx', stale))
        w = make_weights(cfg['seed'], cfg['hidden'], cfg['heads'], cfg['layers'], cfg['inter'], cfg['classifier'])
        with open(os.path.join(d, 'config.json'), 'w') as f:
            json.dump(config_json(cfg), f, indent=1)
        with open(os.path.join(d, 'tokenizer.json'), 'w') as f:
            json.dump(tokenizer_json(), f, ensure_ascii=False)
        with open(os.path.join(d, 'tokenizer_config.json'), 'w') as f:
            json.dump(TOKENIZER_CONFIG, f, indent=1)
        entry = {'repo': cfg['repo'], 'dimension': cfg['hidden'], 'max_length': cfg['max_length'], 'outputs': {}}
        for dtype in cfg['files']:
            quant = dtype == 'q8'
            model = build_graph(w, cfg, quant, cfg['classifier'])
            onnx.save(model, os.path.join(d, 'onnx', 'model_quantized.onnx' if quant else 'model.onnx'))
            ww = dequantized(w) if quant else w
            if cfg['classifier']:
                scores, ids = [], []
                for p in PASSAGES:
                    s, i = np_rerank(ww, cfg, QUERY, p, cfg['max_length'])
                    scores.append(s)
                    ids.append(i)
                entry['outputs'][dtype] = {'logits': scores, 'input_ids': ids}
            else:
                vecs, ids = [], []
                for t in TEXTS:
                    v, i = np_embed(ww, cfg, t, cfg['pooling'], cfg['max_length'])
                    vecs.append(v)
                    ids.append(i)
                out = {'passage': vecs, 'input_ids': ids}
                if role == 'accurate':
                    out['query'] = [np_embed(ww, cfg, BGE_INSTRUCTION + t, cfg['pooling'], cfg['max_length'])[0] for t in TEXTS]
                entry['outputs'][dtype] = out
        expected['models'][role] = entry
    with open(os.path.join(OUT, 'expected.json'), 'w') as f:
        json.dump(expected, f)
    total = sum(os.path.getsize(os.path.join(r, n)) for r, _, ns in os.walk(OUT) for n in ns)
    print(f'wrote tiny models to {OUT} ({total} bytes)')


if __name__ == '__main__':
    main()
