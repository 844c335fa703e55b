/**
 * A known microphone stream for the VAD tests: espeak-ng speech resampled to 16 kHz and placed at a
 * chosen time inside light noise, with the interval where the speech really is, taken from the
 * synthesised signal's own envelope.
 */
import { synthesizeEspeak } from '../../plugins/voice/tts-espeak.js';
import { parseWav } from '../../plugins/voice/wav.js';

export interface SpeechStream {
  samples: Int16Array;
  sampleRate: number;
  /** Where the speech is in the stream, in ms. */
  speechStartMs: number;
  speechEndMs: number;
}

/** Linear interpolation: enough for speech going into a speech model, and needs no sox. */
export function resample(input: Int16Array, from: number, to: number): Int16Array {
  const out = new Int16Array(Math.floor((input.length * to) / from));
  for (let i = 0; i < out.length; i++) {
    const x = (i * from) / to;
    const j = Math.floor(x);
    const a = input[j] ?? 0;
    const b = input[j + 1] ?? a;
    out[i] = Math.round(a + (b - a) * (x - j));
  }
  return out;
}

/** Deterministic noise of about `amplitude` peak. */
export function noise(length: number, amplitude: number, seed = 1): Int16Array {
  let x = seed;
  return Int16Array.from({ length }, () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return Math.round(((x >>> 8) / 0xffffff - 0.5) * 2 * amplitude);
  });
}

/** First and last sample whose magnitude reaches 2 % of the peak: where the voice is. */
export function envelope(samples: Int16Array): { first: number; last: number } {
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  const floor = peak * 0.02;
  let first = 0;
  while (first < samples.length && Math.abs(samples[first] ?? 0) < floor) first++;
  let last = samples.length - 1;
  while (last > first && Math.abs(samples[last] ?? 0) < floor) last--;
  return { first, last };
}

export async function speechInNoise(text: string, options: { atMs: number; totalMs: number; sampleRate?: number }): Promise<SpeechStream> {
  const sampleRate = options.sampleRate ?? 16000;
  const speech = await synthesizeEspeak(text, { language: 'en', timeoutMs: 20_000 });
  const info = parseWav(speech.wav);
  const pcm = speech.wav.subarray(info.dataOffset, info.dataOffset + info.dataLength);
  const raw = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
  const voice = resample(raw, info.sampleRate, sampleRate);
  const { first, last } = envelope(voice);
  const samples = noise(Math.round((options.totalMs * sampleRate) / 1000), 40);
  const offset = Math.round((options.atMs * sampleRate) / 1000) - first;
  if (offset < 0 || offset + voice.length > samples.length) throw new Error(`"${text}" does not fit the stream`);
  for (let i = 0; i < voice.length; i++)
    samples[offset + i] = Math.max(-32768, Math.min(32767, (samples[offset + i] ?? 0) + (voice[i] ?? 0)));
  return {
    samples,
    sampleRate,
    speechStartMs: ((offset + first) * 1000) / sampleRate,
    speechEndMs: ((offset + last + 1) * 1000) / sampleRate,
  };
}
