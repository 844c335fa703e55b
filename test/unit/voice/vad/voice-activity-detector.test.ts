import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { Microphone } from '../../../../devices/microphone/microphone.js';
import type { Utterance } from '../../../../plugins/voice/speech.js';
import { DEFAULT_VAD_SETTINGS } from '../../../../plugins/voice/vad/speech-segmenter.js';
import { findVadModel, loadVadModel, VAD_MODEL_SHA256 } from '../../../../plugins/voice/vad/vad-model.js';
import { VoiceActivityDetector } from '../../../../plugins/voice/vad/voice-activity-detector.js';
import { alsaTestDevices } from '../../../helpers/alsa-test-devices.js';
import { noise, speechInNoise } from '../../../helpers/speech-fixture.js';
import { arecordMissing, espeakMissing } from '../../../helpers/system-tools.js';
import { until } from '../../../helpers/until.js';
import { expectError, expectErrorAsync } from '../../fixtures/support.js';

const TOLERANCE_MS = 100;

interface Heard {
  starts: number[];
  utterances: Utterance[];
  errors: Error[];
}

async function openDetector(t: Test, sampleRate: 16000 | 8000 = 16000): Promise<{ vad: VoiceActivityDetector; heard: Heard }> {
  const heard: Heard = { starts: [], utterances: [], errors: [] };
  const vad = await VoiceActivityDetector.open({
    sampleRate,
    settings: () => DEFAULT_VAD_SETTINGS,
    events: {
      onSpeechStart: (ms) => heard.starts.push(ms),
      onUtterance: (u) => heard.utterances.push(u),
      onError: (e) => heard.errors.push(e),
    },
  });
  t.teardown(() => vad.close());
  return { vad, heard };
}

/** Records `samples` through arecord from an ALSA file device, bounded to their length. */
async function throughMicrophone(t: Test, samples: Int16Array, onAudio: (s: Int16Array) => void): Promise<void> {
  const dir = t.testdir({});
  const infile = join(dir, 'mic.raw');
  writeFileSync(infile, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  const { env } = alsaTestDevices(dir, { micInfile: infile });
  let left = samples.length;
  let stopped: Promise<void> | undefined;
  const mic = new Microphone({
    device: 'mic',
    sampleRate: 16000,
    channels: 1,
    format: 'S16_LE',
    restartBackoffMs: 100,
    restartBackoffMaxMs: 1000,
    env,
    onAudio(chunk) {
      if (stopped) return;
      const part = chunk.subarray(0, left);
      left -= part.length;
      onAudio(part);
      if (left === 0) stopped = mic.stop();
    },
  });
  mic.start();
  await until('the whole stream', () => (stopped ? true : undefined));
  await stopped;
}

t.test('the model file is found and matches its digest', async (t) => {
  const path = findVadModel();
  t.ok(path?.endsWith('silero_vad_v5.onnx'), `found ${path}`);
  t.equal(loadVadModel(path).length, 2_327_524);
});

t.test('an altered or missing model is refused naming the path and both digests', async (t) => {
  const dir = t.testdir({});
  const copy = join(dir, 'silero_vad_v5.onnx');
  copyFileSync(findVadModel() as string, copy);
  const bytes = readFileSync(copy);
  bytes[1000] = (bytes[1000] ?? 0) ^ 0xff;
  writeFileSync(copy, bytes);
  const error = expectError(t, () => loadVadModel(copy), 'HA_ERR_VOICE_VAD');
  t.match(error.message, copy);
  t.match(error.message, `expected ${VAD_MODEL_SHA256}`);
  t.match(error.message, /sha256 [0-9a-f]{64}/);
  const opened = await expectErrorAsync(
    t,
    () =>
      VoiceActivityDetector.open({
        sampleRate: 16000,
        settings: () => DEFAULT_VAD_SETTINGS,
        events: { onSpeechStart() {}, onUtterance() {} },
        modelPath: copy,
      }),
    'HA_ERR_VOICE_VAD',
  );
  t.match(opened.message, copy);
  expectError(t, () => loadVadModel(join(dir, 'nothing.onnx')), 'HA_ERR_VOICE_VAD');
});

t.test('espeak speech recorded through arecord is found within 100 ms', { skip: espeakMissing() || arecordMissing() }, async (t) => {
  const stream = await speechInNoise('Turn on the kitchen light.', { atMs: 1000, totalMs: 3500 });
  const { vad, heard } = await openDetector(t);
  await throughMicrophone(t, stream.samples, (chunk) => vad.push(chunk));
  await vad.flush();
  t.equal(vad.stats.frames, Math.floor(stream.samples.length / 512));
  t.equal(heard.errors.length, 0);
  t.equal(heard.utterances.length, 1, 'one utterance');
  const u = heard.utterances[0] as Utterance;
  t.ok(Math.abs(u.speechStartMs - stream.speechStartMs) <= TOLERANCE_MS, `start ${u.speechStartMs} ms, true ${stream.speechStartMs} ms`);
  t.ok(Math.abs(u.speechEndMs - stream.speechEndMs) <= TOLERANCE_MS, `end ${u.speechEndMs} ms, true ${stream.speechEndMs} ms`);
  t.same(heard.starts, [u.speechStartMs]);
  t.equal(u.truncated, false);
  t.equal(u.sampleRate, 16000);
  // The audio is the stream itself, from the pre-roll to the end of speech.
  const from = ((u.speechStartMs - DEFAULT_VAD_SETTINGS.pre_roll_ms) * 16000) / 1000;
  t.same(
    Buffer.from(u.samples.buffer, u.samples.byteOffset, u.samples.byteLength),
    Buffer.from(stream.samples.slice(from, (u.speechEndMs * 16000) / 1000).buffer),
  );
});

t.test('noise alone is no utterance; reset starts the stream over', { skip: espeakMissing() }, async (t) => {
  const { vad, heard } = await openDetector(t);
  const quiet = noise(16000 * 3, 40, 5);
  for (let at = 0; at < quiet.length; at += 1000) vad.push(quiet.subarray(at, at + 1000));
  await vad.flush();
  t.equal(heard.starts.length + heard.utterances.length, 0);
  t.equal(vad.stats.frames, Math.floor(quiet.length / 512));
  t.ok(vad.stats.inferenceMs > 0);

  const stream = await speechInNoise('What time is it?', { atMs: 500, totalMs: 3000 });
  vad.push(stream.samples.subarray(0, 16000));
  vad.reset();
  vad.push(stream.samples);
  await vad.flush();
  t.equal(heard.utterances.length, 1);
  t.ok(Math.abs((heard.utterances[0]?.speechStartMs ?? 0) - stream.speechStartMs) <= TOLERANCE_MS, 'stream time restarted at the reset');
});

t.test('8 kHz streams work too', { skip: espeakMissing() }, async (t) => {
  const { vad, heard } = await openDetector(t, 8000);
  const stream = await speechInNoise('Turn off the fan.', { atMs: 1000, totalMs: 3500, sampleRate: 8000 });
  vad.push(stream.samples);
  await vad.flush();
  t.equal(vad.stats.frames, Math.floor(stream.samples.length / 256));
  t.equal(heard.utterances.length, 1);
  const u = heard.utterances[0] as Utterance;
  t.ok(Math.abs(u.speechStartMs - stream.speechStartMs) <= TOLERANCE_MS, `start ${u.speechStartMs} ms, true ${stream.speechStartMs} ms`);
  t.ok(Math.abs(u.speechEndMs - stream.speechEndMs) <= TOLERANCE_MS, `end ${u.speechEndMs} ms, true ${stream.speechEndMs} ms`);
});

t.test('a worker that dies is reported once as HA_ERR_VOICE_VAD', async (t) => {
  const { vad, heard } = await openDetector(t);
  vad.push(new Int16Array(512 * 4));
  // The worker is private; terminating it stands in for a crash of the native runtime.
  await (vad as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
  await until('the error', () => (heard.errors.length > 0 ? true : undefined));
  t.equal(heard.errors.length, 1);
  t.match(heard.errors[0], { code: 'HA_ERR_VOICE_VAD', message: /VAD worker stopped/ });
  await expectErrorAsync(t, () => vad.flush(), 'HA_ERR_VOICE_VAD');
  vad.push(new Int16Array(512));
  t.equal(heard.errors.length, 1);
});

t.test('bad settings refuse to open', async (t) => {
  await expectErrorAsync(
    t,
    () =>
      VoiceActivityDetector.open({
        sampleRate: 16000,
        settings: () => ({ ...DEFAULT_VAD_SETTINGS, negative_threshold: 0.6 }),
        events: { onSpeechStart() {}, onUtterance() {} },
      }),
    'HA_ERR_CONFIG_INVALID',
  );
});

t.test('close() while frames are in flight reports nothing more and ends the worker', { skip: espeakMissing() }, async (t) => {
  const { vad, heard } = await openDetector(t);
  const stream = await speechInNoise('Turn on the kitchen light.', { atMs: 1000, totalMs: 3500 });
  vad.push(stream.samples);
  const flushed = vad.flush().then(
    () => undefined,
    (error: unknown) => error,
  );
  await vad.close();
  t.match(await flushed, { code: 'HA_ERR_VOICE_VAD', message: /closed/ }, 'a flush waiting at close() is refused');
  t.same(heard, { starts: [], utterances: [], errors: [] });
  await expectErrorAsync(t, () => vad.flush(), 'HA_ERR_VOICE_VAD');
  vad.push(stream.samples);
  vad.reset();
  t.equal((vad as unknown as { worker: { threadId: number } }).worker.threadId, -1, 'the worker thread has ended');
});
