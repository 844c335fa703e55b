// Embedding speed. embed_*_texts_per_s: throughput of one embed() call over a batch of mixed
// Chinese/English texts (20–120 characters, like context-window events). embed_*_single_ms: one
// text per call, sequential, as recall embeds a query; value is p95. The hash embedder runs with
// its default word split and with jieba words (as memory passes them). The ONNX embedder runs a
// model built here with the shape of all-MiniLM-L6-v2's interface (BERT WordPiece tokenizer,
// 384 dims, mean pooling) but only an embedding-table lookup inside: its figures are the cost of
// the worker, tokenizer and pooling around a model, not of a transformer.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';
import { size } from './quick.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src');
const load = (path) => import(join(dist, path));

const BATCH = size(2000, 50);
const SINGLE_RUNS = size(500, 10);
const WARMUP = size(50, 3);
const DIM = 384;

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (ms) => Math.round(ms * 1000) / 1000;

const CLAUSES = [
  '把客厅的灯打开',
  '明天早上七点叫我起床',
  '我妹妹去年搬到了上海',
  '厨房的温度是多少',
  'turn on the living room lamp',
  'what is the weather tomorrow in Beijing',
  'remind me to buy rice and eggs after work',
  '我的工作是软件工程师，平时喜欢跑步',
  'the kitchen sensor says 23.5 degrees',
  '下周三下午三点有个会议',
];

/** Deterministic mixed texts of 1–4 clauses. */
function texts(n) {
  const out = [];
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
  };
  for (let i = 0; i < n; i++) {
    const parts = [];
    for (let k = 0, count = 1 + (next() % 4); k < count; k++) parts.push(CLAUSES[next() % CLAUSES.length]);
    out.push(`${parts.join('，')} ${i}`);
  }
  return out;
}

/** A BERT-like tokenizer.json: lower-case words of the clauses, CJK characters, digits, ## pieces. */
function bertTokenizer() {
  const tokens = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'];
  const words = new Set();
  for (const clause of CLAUSES) {
    for (const w of clause.toLowerCase().match(/[a-z]+/g) ?? []) words.add(w);
    for (const ch of clause.match(/\p{Script=Han}/gu) ?? []) words.add(ch);
  }
  for (let d = 0; d < 10; d++) words.add(String(d)).add(`##${d}`);
  tokens.push(...words, '，', '.');
  const vocab = Object.fromEntries(tokens.map((t, i) => [t, i]));
  const special = (content) => ({
    id: vocab[content],
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    vocab,
    json: {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]'].map(special),
      normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: {
        type: 'TemplateProcessing',
        single: [
          { SpecialToken: { id: '[CLS]', type_id: 0 } },
          { Sequence: { id: 'A', type_id: 0 } },
          { SpecialToken: { id: '[SEP]', type_id: 0 } },
        ],
        pair: [],
        special_tokens: {
          '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
          '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
        },
      },
      decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
      model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
    },
  };
}

async function writeBenchModel(dir, writeOnnxModel) {
  const { vocab, json } = bertTokenizer();
  const size = Object.keys(vocab).length;
  const table = new Float32Array(size * DIM).map((_, i) => Math.sin(i * 0.7));
  const model = writeOnnxModel({
    name: 'bench-embedder',
    inputs: ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => ({ name, type: 'int64', shape: ['batch', 'sequence'] })),
    outputs: [{ name: 'last_hidden_state', type: 'float', shape: ['batch', 'sequence', DIM] }],
    initializers: [
      { name: 'table', type: 'float', dims: [size, DIM], values: table },
      { name: 'axis2', type: 'int64', dims: [1], values: [2] },
    ],
    nodes: [
      { op: 'Gather', inputs: ['table', 'input_ids'], outputs: ['tokens'], attributes: [{ name: 'axis', int: 0 }] },
      { op: 'Cast', inputs: ['attention_mask'], outputs: ['mask_f'], attributes: [{ name: 'to', int: 1 }] },
      { op: 'Unsqueeze', inputs: ['mask_f', 'axis2'], outputs: ['mask_3d'] },
      { op: 'Mul', inputs: ['tokens', 'mask_3d'], outputs: ['last_hidden_state'] },
    ],
  });
  writeFileSync(join(dir, 'model.onnx'), model);
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
  writeFileSync(
    join(dir, 'embedder.json'),
    JSON.stringify({
      dim: DIM,
      pooling: 'mean',
      normalize: true,
      max_tokens: 256,
      inputs: { input_ids: 'input_ids', attention_mask: 'attention_mask', token_type_ids: 'token_type_ids' },
      output: 'last_hidden_state',
    }),
  );
}

async function measure(emit, label, embedder, what) {
  const batch = texts(BATCH);
  await embedder.embed(batch.slice(0, 100));
  const started = performance.now();
  const vectors = await embedder.embed(batch);
  const seconds = (performance.now() - started) / 1000;
  if (vectors.length !== BATCH || vectors[0].length !== embedder.dim) throw new Error(`${label}: wrong output`);
  emit({
    name: `embed_${label}_texts_per_s`,
    unit: 'texts/s',
    value: Math.round(BATCH / seconds),
    n: BATCH,
    dim: embedder.dim,
    what: `one embed() call over ${BATCH} mixed zh/en texts; ${what}`,
  });

  const singles = texts(SINGLE_RUNS + WARMUP);
  const times = [];
  for (const [i, text] of singles.entries()) {
    const t0 = performance.now();
    await embedder.embed([text]);
    if (i >= WARMUP) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  emit({
    name: `embed_${label}_single_ms`,
    unit: 'ms',
    value: round(percentile(times, 95)),
    p50: round(percentile(times, 50)),
    p95: round(percentile(times, 95)),
    n: SINGLE_RUNS,
    what: `one text per embed() call, sequential, after warm-up; value is p95; ${what}`,
  });
}

export async function run(emit) {
  const [{ HashEmbedder }, { OnnxEmbedder }, { writeOnnxModel }] = await Promise.all([
    load('embed/hash-embedder.js'),
    load('embed/onnx-embedder.js'),
    load('embed/onnx-writer.js'),
  ]);
  await measure(emit, 'hash', new HashEmbedder(), 'hashed n-grams, default word split, 384 dims');
  const jieba = Jieba.withDict(dict);
  const withJieba = new HashEmbedder({ tokens: (text) => jieba.cut(text, false).filter((w) => /[\p{L}\p{N}]/u.test(w)) });
  await measure(emit, 'hash_jieba', withJieba, 'hashed n-grams plus jieba words, 384 dims');

  const root = mkdtempSync(join(tmpdir(), 'ha-bench-embed-'));
  try {
    await writeBenchModel(root, writeOnnxModel);
    const started = performance.now();
    const onnx = await OnnxEmbedder.create(root, { threads: 1 });
    const loadMs = performance.now() - started;
    try {
      emit({
        name: 'embed_onnx_load_ms',
        unit: 'ms',
        value: Math.round(loadMs),
        n: 1,
        what: 'OnnxEmbedder.create: worker start, ORT init, tokenizer, model hash and a probe text (table-lookup model)',
      });
      await measure(emit, 'onnx', onnx, 'ONNX embedder in its worker, batch 16, 1 thread, table-lookup stand-in model (no transformer)');
    } finally {
      await onnx.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
