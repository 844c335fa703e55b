// The worker side of the ONNX embedder: load errors crossing the thread boundary, cancelling a
// load, concurrent calls, and the event loop staying free while the worker tokenizes and runs.
// (Model behaviour is in onnx-pipeline.test.ts; the shared behaviour in the contract suite.)
import { join } from 'node:path';
import t from 'tap';
import { OnnxEmbedder } from '../../../src/embed/onnx-embedder.js';
import { expectErrorAsync, tempDir } from '../fixtures/support.js';
import { writeTinyModel } from './fixtures/tiny-model.js';

t.test('options and directory problems fail before a worker starts', async (t) => {
  const dir = writeTinyModel(join(tempDir(t), 'tiny')).dir;
  await expectErrorAsync(t, () => OnnxEmbedder.create(dir, { batchSize: 0 }), 'HA_ERR_EMBED_OPTIONS');
  await expectErrorAsync(t, () => OnnxEmbedder.create(dir, { threads: 1.5 }), 'HA_ERR_EMBED_OPTIONS');
  const error = await expectErrorAsync(t, () => OnnxEmbedder.create(join(dir, 'missing')), 'HA_ERR_EMBED_MODEL_MISSING');
  t.match(error.message, /missing does not exist/);
  const aborted = new AbortController();
  aborted.abort();
  await expectErrorAsync(t, () => OnnxEmbedder.create(dir, { signal: aborted.signal }), 'HA_ERR_ABORTED');
});

t.test('a load error in the worker arrives with its code and message', async (t) => {
  const dir = writeTinyModel(join(tempDir(t), 'wrong-dim'), { manifest: { dim: 24 } }).dir;
  const error = await expectErrorAsync(t, () => OnnxEmbedder.create(dir), 'HA_ERR_EMBED_OUTPUT_SHAPE');
  t.match(error.message, /embedder\.json \(pooling mean, dim 24\) expects \[batch, tokens, 24\]/);
});

t.test('aborting while the model loads stops the worker', async (t) => {
  const dir = writeTinyModel(join(tempDir(t), 'tiny')).dir;
  const controller = new AbortController();
  const creating = OnnxEmbedder.create(dir, { signal: controller.signal });
  controller.abort();
  await expectErrorAsync(t, () => creating, 'HA_ERR_ABORTED');
});

t.test('one worker: concurrent calls, batches, and a free event loop', async (t) => {
  const dir = writeTinyModel(join(tempDir(t), 'tiny'), { dim: 16 }).dir;
  const embedder = await OnnxEmbedder.create(dir, { batchSize: 3, threads: 1 });
  t.teardown(() => embedder.close());
  t.equal(embedder.manifest.pooling, 'mean', 'the manifest is exposed');

  const a = ['the living room lamp is on', '客厅的灯开着', 'hello', 'turn off the lights', 'my sister moved to shanghai'];
  const b = ['明天下雨吗', 'cook rice for dinner', '', 'the kitchen light is off'];
  const [alone1, alone2] = [await embedder.embed(a), await embedder.embed(b)];
  const [together1, together2] = await Promise.all([embedder.embed(a), embedder.embed(b)]);
  t.same(together1, alone1, 'two calls at once: the first gets its own vectors');
  t.same(together2, alone2, 'and so does the second');
  t.ok(
    together1.every((v) => v.buffer.byteLength === 16 * 4),
    'every vector owns its buffer',
  );

  // One big batch: if tokenizing ran on this thread, no callback could run until it finished.
  const big = await OnnxEmbedder.create(dir, { batchSize: 1024, threads: 1 });
  t.teardown(() => big.close());
  const texts = Array.from({ length: 1024 }, (_, i) => `${a[i % a.length]} and ${b[i % b.length]} `.repeat(8) + i);
  let spins = 0;
  let running = true;
  const spin = () => {
    spins++;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  const started = performance.now();
  await big.embed(texts);
  running = false;
  const ms = performance.now() - started;
  t.ok(spins > 20, `the event loop turned ${spins} times during a ${ms.toFixed(0)} ms batch`);
});
