import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type WakeWordDetection, WakeWordDetector } from '../../../../plugins/voice/activation/wake-word.js';
import { type AudioPart, synthAudio, type WakeWordModelOptions, writeWakeWordModels } from '../../../helpers/wake-word-models.js';
import { expectErrorAsync } from '../../fixtures/support.js';

const THRESHOLD = 0.5;

interface Heard {
  detections: WakeWordDetection[];
  scores: Array<{ model: string; score: number; atMs: number }>;
  errors: Error[];
}

async function listen(
  t: Test,
  audio: Int16Array,
  options: { models?: WakeWordModelOptions; threshold?: () => number; pieces?: number } = {},
): Promise<Heard & { detector: WakeWordDetector }> {
  const dir = writeWakeWordModels(t.testdir(), options.models);
  const heard: Heard = { detections: [], scores: [], errors: [] };
  const detector = await WakeWordDetector.open({
    dir,
    threshold: options.threshold ?? (() => THRESHOLD),
    onDetection: (d) => heard.detections.push(d),
    onError: (e) => heard.errors.push(e),
    onScore: (model, score, atMs) => heard.scores.push({ model, score, atMs }),
  });
  t.teardown(() => detector.close());
  // Odd piece sizes, so chunking across pushes is exercised.
  const piece = options.pieces ?? 1000;
  for (let at = 0; at < audio.length; at += piece) detector.push(audio.subarray(at, at + piece));
  await detector.flush();
  return { ...heard, detector };
}

const TONE_AT_MS = 3000;
const TONE_MS = 500;
const WITH_TONE: AudioPart[] = [
  { kind: 'noise', ms: TONE_AT_MS, amplitude: 300, seed: 7 },
  { kind: 'tone', ms: TONE_MS, amplitude: 8000 },
  { kind: 'noise', ms: 2500, amplitude: 300, seed: 8 },
];

t.test('a loud 1 kHz tone burst is detected once, near where it was', async (t) => {
  const heard = await listen(t, synthAudio(WITH_TONE));
  t.same(heard.detector.models, ['hey_tone']);
  t.same(heard.errors, []);
  t.equal(heard.detections.length, 1, JSON.stringify(heard.detections));
  const [d] = heard.detections;
  t.equal(d?.model, 'hey_tone');
  t.ok((d?.score ?? 0) >= THRESHOLD, `score ${d?.score}`);
  t.ok((d?.atMs ?? 0) > TONE_AT_MS && (d?.atMs ?? 0) <= TONE_AT_MS + TONE_MS + 160, `detected at ${d?.atMs} ms`);

  // Near misses: the highest score per second of audio; low before the tone, high around it.
  t.ok(heard.scores.length >= 3, `${heard.scores.length} score windows`);
  const before = heard.scores.filter((s) => s.atMs < TONE_AT_MS);
  t.ok(before.length > 0 && before.every((s) => s.score < 0.05), JSON.stringify(before));
  t.ok(
    heard.scores.some((s) => s.score >= THRESHOLD && s.atMs > TONE_AT_MS),
    JSON.stringify(heard.scores),
  );
});

t.test('silence and broadband noise, quiet or loud, are not detected', async (t) => {
  const audio = synthAudio([
    { kind: 'silence', ms: 4000 },
    { kind: 'noise', ms: 4000, amplitude: 500, seed: 3 },
    { kind: 'noise', ms: 4000, amplitude: 12000, seed: 4 },
    { kind: 'tone', ms: 2000, amplitude: 8000, hz: 3000 },
  ]);
  const heard = await listen(t, audio, { pieces: 1280 * 3 + 17 });
  t.same(heard.detections, []);
  t.same(heard.errors, []);
  const highest = Math.max(...heard.scores.map((s) => s.score));
  t.ok(highest < 0.05, `highest score ${highest}`);
});

t.test('two tone bursts give two detections; the threshold is read live', async (t) => {
  const audio = synthAudio([...WITH_TONE, { kind: 'tone', ms: TONE_MS, amplitude: 8000 }, { kind: 'noise', ms: 2500, amplitude: 300 }]);
  t.equal((await listen(t, audio)).detections.length, 2);
  t.equal((await listen(t, audio, { threshold: () => 0.9999 })).detections.length, 0, 'a threshold above every score');
});

t.test('several classifiers: each named by its file, each with its declared number of embeddings', async (t) => {
  const heard = await listen(t, synthAudio(WITH_TONE), {
    models: { classifiers: [{ name: 'hey_tone' }, { name: 'long_tone', frames: 25 }, { name: 'any_count', symbolicFrames: true }] },
  });
  t.same(heard.detector.models, ['any_count', 'hey_tone', 'long_tone']);
  t.same(heard.errors, []);
  t.same(heard.detections.map((d) => d.model).sort(), ['any_count', 'hey_tone', 'long_tone']);
});

t.test('audio short of a whole 80 ms step waits for more; push after close is ignored', async (t) => {
  const dir = writeWakeWordModels(t.testdir());
  const detections: WakeWordDetection[] = [];
  const detector = await WakeWordDetector.open({ dir, threshold: () => THRESHOLD, onDetection: (d) => detections.push(d) });
  const audio = synthAudio(WITH_TONE);
  // Everything but the tone's last 300 ms: not yet enough.
  const cut = ((TONE_AT_MS + 100) * 16) | 0;
  detector.push(audio.subarray(0, cut));
  await detector.flush();
  t.same(detections, []);
  detector.push(audio.subarray(cut));
  await detector.flush();
  t.equal(detections.length, 1);
  await detector.close();
  detector.push(audio);
  await detector.flush();
  await detector.close();
  t.equal(detections.length, 1);
});

t.test('a missing directory or model file is named', async (t) => {
  const root = t.testdir();
  const open = (dir: string) => WakeWordDetector.open({ dir, threshold: () => THRESHOLD, onDetection: () => undefined });
  let e = await expectErrorAsync(t, () => open(join(root, 'nowhere')), 'HA_ERR_VOICE_WAKE_WORD');
  t.match(e.message, `${join(root, 'nowhere')}: no such directory`);

  const noEmbedding = writeWakeWordModels(join(root, 'a'), { omit: ['embedding_model.onnx'] });
  e = await expectErrorAsync(t, () => open(noEmbedding), 'HA_ERR_VOICE_WAKE_WORD');
  t.match(e.message, `${join(noEmbedding, 'embedding_model.onnx')}: missing`);

  const noMel = writeWakeWordModels(join(root, 'b'), { omit: ['melspectrogram.onnx'] });
  e = await expectErrorAsync(t, () => open(noMel), 'HA_ERR_VOICE_WAKE_WORD');
  t.match(e.message, `${join(noMel, 'melspectrogram.onnx')}: missing`);

  const noClassifier = writeWakeWordModels(join(root, 'c'), { omit: ['hey_tone.onnx'] });
  e = await expectErrorAsync(t, () => open(noClassifier), 'HA_ERR_VOICE_WAKE_WORD');
  t.match(e.message, `${noClassifier}: no classifier`);

  const garbage = writeWakeWordModels(join(root, 'd'));
  writeFileSync(join(garbage, 'hey_tone.onnx'), 'not a model');
  e = await expectErrorAsync(t, () => open(garbage), 'HA_ERR_VOICE_WAKE_WORD');
  t.match(e.message, `${join(garbage, 'hey_tone.onnx')}: ONNX Runtime cannot load it`);
});

t.test('shape mismatches are rejected naming the file, the shape found and the one expected', async (t) => {
  const root = t.testdir();
  const cases: Array<[string, WakeWordModelOptions, string, RegExp]> = [
    ['bands', { melBands: 40 }, 'melspectrogram.onnx', /output shape \[1,1,8,40\] \(float32\) found, \[1,1,frames,32\] float32 expected/],
    [
      'embedding',
      { embeddingSize: 64 },
      'embedding_model.onnx',
      /output shape \[1,1,1,64\] \(float32\) found, \[1,1,1,96\] float32 expected/,
    ],
    [
      'classifier',
      { classifiers: [{ name: 'narrow', features: 64 }] },
      'narrow.onnx',
      /input shape \[1,16,64\] found, \[1,n,96\] expected/,
    ],
  ];
  for (const [name, options, file, why] of cases) {
    const dir = writeWakeWordModels(join(root, name), options);
    const e = await expectErrorAsync(
      t,
      () => WakeWordDetector.open({ dir, threshold: () => THRESHOLD, onDetection: () => undefined }),
      'HA_ERR_VOICE_WAKE_WORD',
    );
    t.match(e.message, `${join(dir, file)}: `, name);
    t.match(e.message, why, name);
  }
});
