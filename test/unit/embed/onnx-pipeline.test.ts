// The model side of the ONNX embedder, run in this thread (the worker only relays messages; see
// onnx-embedder.test.ts): tokenizing, feeding, pooling, truncation, fingerprints and every way a
// model directory can be wrong.
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { cosine } from '../../../src/embed/embedder.js';
import { readModelManifest, validateManifest } from '../../../src/embed/model-manifest.js';
import { OnnxPipeline } from '../../../src/embed/onnx-pipeline.js';
import { expectError, expectErrorAsync, tempDir } from '../fixtures/support.js';
import { embeddingTable, type TinyModelOptions, vocabulary, writeTinyModel } from './fixtures/tiny-model.js';

async function load(t: Test, dir: string): Promise<OnnxPipeline> {
  const pipeline = await OnnxPipeline.load(dir, readModelManifest(dir), 1);
  t.teardown(() => pipeline.release());
  return pipeline;
}

function model(t: Test, options: TinyModelOptions = {}, name = 'model'): string {
  return writeTinyModel(join(tempDir(t, 'ha-onnx-'), name), options).dir;
}

const rows = (flat: Float32Array, dim: number) => Array.from({ length: flat.length / dim }, (_, i) => flat.slice(i * dim, (i + 1) * dim));
const maxDiff = (a: Float32Array, b: Float32Array) => Math.max(...Array.from(a, (x, i) => Math.abs(x - (b[i] as number))));

t.test('mean pooling over the attention mask: padding in a batch changes nothing', async (t) => {
  const pipeline = await load(t, model(t));
  const texts = ['lamp', 'the living room lamp is on and the kitchen light is off'];
  const batch = rows(await pipeline.embed(texts), 16);
  const alone = rows(await pipeline.embed(['lamp']), 16);
  t.ok(maxDiff(batch[0] as Float32Array, alone[0] as Float32Array) < 1e-6, 'the short text padded to the long one equals itself alone');

  // By hand: mean of the rows of [CLS] lamp [SEP], normalised.
  const vocab = vocabulary();
  const table = embeddingTable(vocab, 16);
  const expected = new Float32Array(16);
  for (const token of ['[CLS]', 'lamp', '[SEP]']) {
    const id = vocab.get(token) as number;
    for (let d = 0; d < 16; d++) expected[d] = (expected[d] as number) + (table[id * 16 + d] as number) / 3;
  }
  const norm = Math.sqrt(cosine(expected, expected));
  t.ok(
    maxDiff(
      alone[0] as Float32Array,
      expected.map((x) => x / norm),
    ) < 1e-5,
    'equals the hand-computed mean of the table rows',
  );
});

t.test('cls pooling takes the first token', async (t) => {
  const pipeline = await load(t, model(t, { manifest: { pooling: 'cls' } }));
  const [a, b] = rows(await pipeline.embed(['lamp', 'my sister moved to shanghai']), 16) as [Float32Array, Float32Array];
  // The table gives [CLS] the same row whatever follows, so every text has the same CLS vector.
  t.ok(maxDiff(a, b) < 1e-6, 'two texts, one [CLS] row');
  t.ok(Math.abs(cosine(a, a) - 1) < 1e-5, 'normalised');
  t.match(pipeline.fingerprint, /:cls:norm$/, 'the fingerprint names the pooling');
});

t.test('pooling none reads an already pooled [batch, dim] output (Gather → ReduceMean)', async (t) => {
  const pooled = await load(t, model(t, { pooling: 'none' }, 'pooled'));
  const mean = await load(t, model(t, {}, 'mean'));
  const text = '客厅的灯开着';
  t.ok(maxDiff(await pooled.embed([text]), await mean.embed([text])) < 1e-5, 'the same vector as mean pooling in JS');
});

t.test('int32 token inputs and models without token_type_ids', async (t) => {
  const reference = await load(t, model(t, {}, 'reference'));
  const int32 = await load(t, model(t, { idType: 'int32', noTokenTypes: true }, 'int32'));
  const text = 'turn on the lamp';
  t.ok(maxDiff(await int32.embed([text]), await reference.embed([text])) < 1e-6, 'same vectors from int32 inputs');
});

t.test('texts longer than max_tokens are cut, keeping [SEP]', async (t) => {
  const cut = await load(t, model(t, { maxTokens: 4 }, 'cut'));
  const full = await load(t, model(t, {}, 'full'));
  // [CLS] living room [SEP] — the rest is dropped, the closing [SEP] kept.
  t.ok(maxDiff(await cut.embed(['living room lamp sister shanghai']), await full.embed(['living room'])) < 1e-6, 'cut to 4 tokens');
});

t.test('fingerprint: content of model, tokenizer and manifest, not the path', async (t) => {
  const dir = model(t);
  const a = await load(t, dir);
  t.match(a.fingerprint, /^onnx:[0-9a-f]{16}:16:mean:norm$/);
  const copy = join(tempDir(t), 'copy');
  cpSync(dir, copy, { recursive: true });
  t.equal((await load(t, copy)).fingerprint, a.fingerprint, 'a copy elsewhere has the same fingerprint');
  const other = model(t, { maxTokens: 64 }, 'other');
  t.not((await load(t, other)).fingerprint, a.fingerprint, 'another max_tokens, another fingerprint');
  const raw = model(t, { manifest: { normalize: false } }, 'raw');
  t.match((await load(t, raw)).fingerprint, /:mean:raw$/, 'normalize: false is part of it');
});

t.test('manifest validation names the field', async (t) => {
  const good = { dim: 8, pooling: 'mean', normalize: true, max_tokens: 16, inputs: { input_ids: 'ids' } };
  t.same(validateManifest(good, 'm.json'), good, 'a minimal manifest');
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['dim 0', { dim: 0 }, /m\.json: dim must be an integer from 1/],
    ['dim as string', { dim: '8' }, /dim must be an integer/],
    ['unknown pooling', { pooling: 'max' }, /pooling must be "mean", "cls" or "none"/],
    ['normalize not boolean', { normalize: 'yes' }, /normalize must be true or false/],
    ['max_tokens missing', { max_tokens: undefined }, /max_tokens must be an integer/],
    ['no input_ids', { inputs: { attention_mask: 'mask' } }, /inputs\.input_ids is required/],
    ['unknown role', { inputs: { input_ids: 'ids', position_ids: 'pos' } }, /inputs\.position_ids is not a role/],
    ['typo in a key', { dims: 8 }, /dims is not a manifest field/],
    ['bad pad id', { pad_token_id: -1 }, /pad_token_id must be a token id/],
  ];
  for (const [label, change, message] of cases) {
    const raw: Record<string, unknown> = { ...good, ...change };
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete raw[k];
    const error = expectError(t, () => validateManifest(raw, 'm.json'), 'HA_ERR_EMBED_MANIFEST');
    t.match(error.message, message, label);
  }
  expectError(t, () => validateManifest([], 'm.json'), 'HA_ERR_EMBED_MANIFEST');
});

t.test('missing directory and files', async (t) => {
  const root = tempDir(t);
  t.match(expectError(t, () => readModelManifest(join(root, 'nope')), 'HA_ERR_EMBED_MODEL_MISSING').message, /does not exist/);
  for (const file of ['model.onnx', 'tokenizer.json', 'embedder.json']) {
    const dir = writeTinyModel(join(root, `without-${file}`)).dir;
    rmSync(join(dir, file));
    const error = expectError(t, () => readModelManifest(dir), 'HA_ERR_EMBED_MODEL_MISSING');
    t.match(error.message, `has no ${file}`, `names ${file}`);
  }
  const broken = writeTinyModel(join(root, 'broken-json')).dir;
  writeFileSync(join(broken, 'embedder.json'), '{"dim": 16,');
  t.match(expectError(t, () => readModelManifest(broken), 'HA_ERR_EMBED_MANIFEST').message, /embedder\.json: not valid JSON/);
});

t.test('a manifest that does not fit the model is refused at load', async (t) => {
  const cases: Array<[string, TinyModelOptions, string, RegExp]> = [
    [
      'input name not in the model',
      { manifest: { inputs: { input_ids: 'ids', attention_mask: 'attention_mask', token_type_ids: 'token_type_ids' } } },
      'HA_ERR_EMBED_MANIFEST',
      /inputs\.input_ids names "ids", which is not an input of the model \(it has input_ids, attention_mask, token_type_ids\)/,
    ],
    [
      'a model input without a role',
      { manifest: { inputs: { input_ids: 'input_ids', attention_mask: 'attention_mask' } } },
      'HA_ERR_EMBED_MANIFEST',
      /the model input "token_type_ids" has no role/,
    ],
    [
      'output name not in the model',
      { manifest: { output: 'pooler_output' } },
      'HA_ERR_EMBED_MANIFEST',
      /output "pooler_output" is not an output/,
    ],
    [
      'declared output dim differs',
      { manifest: { dim: 24 } },
      'HA_ERR_EMBED_OUTPUT_SHAPE',
      /declared \[batch, sequence, 16\]; embedder\.json \(pooling mean, dim 24\) expects \[batch, tokens, 24\]/,
    ],
    [
      'declared rank differs',
      { manifest: { pooling: 'none' } },
      'HA_ERR_EMBED_OUTPUT_SHAPE',
      /pooling none, dim 16\) expects \[batch, 16\]/,
    ],
    [
      'a shape only a run reveals',
      { reshapeAtRunTime: true, manifest: { dim: 8 } },
      'HA_ERR_EMBED_OUTPUT_SHAPE',
      /is float32 \[1, (\d+), 8\] for 1 text\(s\) of \d+ token\(s\); embedder\.json \(pooling mean, dim 8\) expects float32 \[1, \d+, 8\]/,
    ],
  ];
  for (const [label, options, code, message] of cases) {
    const dir = model(t, options, label.replace(/\W+/g, '-'));
    const error = await expectErrorAsync(t, () => OnnxPipeline.load(dir, readModelManifest(dir), 1), code as 'HA_ERR_EMBED_MANIFEST');
    t.match(error.message, message, label);
  }
});

t.test('unreadable model or tokenizer', async (t) => {
  const badModel = model(t, {}, 'bad-model');
  writeFileSync(join(badModel, 'model.onnx'), 'this is not a protobuf');
  const e1 = await expectErrorAsync(t, () => OnnxPipeline.load(badModel, readModelManifest(badModel), 1), 'HA_ERR_EMBED_MODEL_LOAD');
  t.match(e1.message, /model\.onnx: ONNX Runtime cannot load it/);
  const badTokenizer = model(t, {}, 'bad-tokenizer');
  writeFileSync(join(badTokenizer, 'tokenizer.json'), '{"model": {"type": "NoSuchModel"}}');
  const e2 = await expectErrorAsync(
    t,
    () => OnnxPipeline.load(badTokenizer, readModelManifest(badTokenizer), 1),
    'HA_ERR_EMBED_MODEL_LOAD',
  );
  t.match(e2.message, /tokenizer\.json: the tokenizer cannot be loaded/);
});
