// Voice activity detection of issue 12: the Silero VAD v5 model in its worker thread, rating 10 s
// of microphone audio (espeak-ng speech in light noise at 16 kHz, or a synthetic tone burst when
// espeak-ng is missing; the record says which) pushed in 100 ms chunks as the microphone would.
// vad_rtf: processing time / audio time, measured from the first push to the end of flush(), so
// message passing counts too. ms_per_30ms_audio scales that to the ~30 ms a frame covers. Goal
// 0.03: a Raspberry Pi must keep up with the microphone with most of a core to spare.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { size } from './quick.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (path) => import(join(dist, path));

const RATE = 16000;
const SECONDS = size(10, 2);
const CHUNK = RATE / 10;
const ROUNDS = size(3, 1);
const GOAL = 0.03;

function noise(length, amplitude) {
  let x = 7;
  return Int16Array.from({ length }, () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return Math.round(((x >>> 8) / 0xffffff - 0.5) * 2 * amplitude);
  });
}

/** espeak-ng's 22,050 Hz speech, resampled linearly to 16 kHz; undefined without espeak-ng. */
function espeakSpeech() {
  const text = 'Good morning. Turn on the kitchen light and set the living room to twenty one degrees, please.';
  const run = spawnSync('espeak-ng', ['-v', 'en-us', '--stdout', text], { maxBuffer: 64 * 1024 * 1024 });
  if (run.error || run.status !== 0) return undefined;
  const wav = run.stdout;
  const rate = wav.readUInt32LE(24);
  let offset = 12;
  while (offset + 8 <= wav.length && wav.toString('ascii', offset, offset + 4) !== 'data') offset += 8 + wav.readUInt32LE(offset + 4);
  const pcm = wav.subarray(offset + 8);
  const input = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + (pcm.byteLength & ~1)));
  const out = new Int16Array(Math.floor((input.length * RATE) / rate));
  for (let i = 0; i < out.length; i++) {
    const x = (i * rate) / RATE;
    const j = Math.floor(x);
    const a = input[j] ?? 0;
    out[i] = Math.round(a + ((input[j + 1] ?? a) - a) * (x - j));
  }
  return out;
}

function syntheticSpeech() {
  // Bursts of a gliding tone with harmonics: not speech, but it keeps the model busy the same way.
  return Int16Array.from({ length: RATE * 4 }, (_, i) => {
    const t = i / RATE;
    const f = 140 + 40 * Math.sin(2 * Math.PI * 3 * t);
    const on = Math.floor(t * 3) % 2 === 0 ? 1 : 0.05;
    return Math.round(on * 6000 * (Math.sin(2 * Math.PI * f * t) + 0.5 * Math.sin(4 * Math.PI * f * t)));
  });
}

export async function run(emit) {
  const { VoiceActivityDetector } = await load('plugins/voice/vad/voice-activity-detector.js');
  const { DEFAULT_VAD_SETTINGS } = await load('plugins/voice/vad/speech-segmenter.js');
  const speech = espeakSpeech();
  const voice = speech ?? syntheticSpeech();
  const audio = noise(RATE * SECONDS, 40);
  for (let i = 0; i < Math.min(voice.length, audio.length - RATE); i++)
    audio[RATE + i] = Math.max(-32768, Math.min(32767, audio[RATE + i] + voice[i]));

  let utterances = 0;
  const vad = await VoiceActivityDetector.open({
    sampleRate: RATE,
    settings: () => DEFAULT_VAD_SETTINGS,
    events: { onSpeechStart() {}, onUtterance: () => utterances++, onError() {} },
  });
  try {
    const times = [];
    for (let round = 0; round <= ROUNDS; round++) {
      vad.reset();
      const started = performance.now();
      for (let at = 0; at < audio.length; at += CHUNK) vad.push(audio.subarray(at, at + CHUNK));
      await vad.flush();
      // Round 0 warms the session up and is not counted.
      if (round > 0) times.push(performance.now() - started);
    }
    const ms = times.reduce((a, b) => a + b, 0) / times.length;
    const rtf = ms / (SECONDS * 1000);
    emit({
      name: 'vad_rtf',
      unit: 'ratio',
      value: Number(rtf.toFixed(5)),
      n: Math.floor(audio.length / 512),
      ms_per_30ms_audio: Number((rtf * 30).toFixed(4)),
      goal: GOAL,
      audio: speech ? 'espeak-ng speech in noise' : 'synthetic tone bursts in noise (espeak-ng missing)',
      utterances: utterances / (ROUNDS + 1),
      rounds: ROUNDS,
    });
  } finally {
    await vad.close();
  }
}
