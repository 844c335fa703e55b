// Generated speech for evaluating the local wake word (issue 30): nothing is downloaded and nothing
// big is committed. espeak-ng says the wake phrase and ordinary household sentences with varied
// voices, speeds and pitches; sox resamples to 16 kHz and makes the noise (white, pink, brown) that
// is mixed under the speech at a random level. A seeded generator makes every run the same data.
//
// Two disjoint parts: `tune` (the threshold is chosen on it) and `heldout` (different voices and
// carrier sentences, only ever measured). Positives are one stream of wake utterances each followed
// by silence, so the decoder ends one utterance per positive; negatives are a long stream of
// speech and noise with no wake phrase.
import { execFileSync } from 'node:child_process';

export const RATE = 16000;

/** Voices per part; the held-out ones are never used for tuning. */
export const VOICES = {
  tune: ['en-us', 'en-us+m3', 'en-us+f2', 'en-gb', 'en-us+m1', 'en-us+f1'],
  heldout: ['en-us+m7', 'en-us+f4', 'en-029', 'en-gb-x-rp', 'en-us+m5', 'en-gb-scotland'],
};

/** How the wake phrase is said; the held-out part also has it before a command. */
const WAKE_TEXTS = {
  tune: ['hey home', 'hey home.', 'hey, home'],
  heldout: ['hey home', 'hey home!', 'hey home, lights on'],
};

const WORDS =
  'the a kitchen light is on off please turn what time weather today tomorrow dinner ready music play stop door garage window open close living room bedroom warm cold heating water plants remind me buy milk bread call mum school bus late early morning evening news radio volume louder quieter oven timer minutes hours how long is it raining outside garden dog cat walk shopping list add eggs coffee tea table chair sofa television film watch homework bath shower hello hi okay thanks yes no maybe later sure great nice'.split(
    ' ',
  );

/** A small deterministic generator (mulberry32), so the data is the same on every run. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (rand, list) => list[Math.floor(rand() * list.length)];

/** espeak-ng speech as 16 kHz mono 16-bit samples. */
export function say(text, { voice, speed, pitch }) {
  const wav = execFileSync('espeak-ng', ['-v', voice, '-s', String(speed), '-p', String(pitch), '--stdout', text], BIG);
  return toSamples(execFileSync('sox', ['-t', 'wav', '-', ...RAW_OUT], { input: wav, ...BIG }));
}

/** Child output limit: a minute of espeak speech is about 3 MB. */
const BIG = { maxBuffer: 256 * 1024 * 1024 };
const RAW_OUT = ['-t', 'raw', '-r', String(RATE), '-c', '1', '-b', '16', '-e', 'signed', '-'];

function toSamples(buffer) {
  return new Int16Array(buffer.buffer, buffer.byteOffset, Math.floor(buffer.byteLength / 2));
}

/** `seconds` of sox noise of a colour at an amplitude (0..1). */
export function noise(seconds, colour, amplitude) {
  return toSamples(
    execFileSync(
      'sox',
      ['-n', ...RAW_OUT, 'synth', String(seconds.toFixed(3)), `${colour}noise`, 'vol', String(amplitude.toFixed(4))],
      BIG,
    ),
  );
}

/** speech + noise, clipped to 16 bits. */
function mix(speech, under) {
  const out = new Int16Array(speech.length);
  for (let i = 0; i < speech.length; i++) out[i] = Math.max(-32768, Math.min(32767, speech[i] + (under[i % under.length] ?? 0)));
  return out;
}

const COLOURS = ['white', 'pink', 'brown'];

function voiceOf(rand, part) {
  return { voice: pick(rand, VOICES[part]), speed: 110 + Math.floor(rand() * 80), pitch: 25 + Math.floor(rand() * 50) };
}

function silence(seconds) {
  return new Int16Array(Math.round(seconds * RATE));
}

function concat(parts) {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Int16Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `count` wake utterances of a part, each in noise and followed by 2.5 s of quiet noise. */
export function positives(part, count, seed) {
  const rand = random(seed);
  const parts = [];
  for (let i = 0; i < count; i++) {
    const speech = say(pick(rand, WAKE_TEXTS[part]), voiceOf(rand, part));
    const withGap = concat([silence(0.5), speech, silence(2.5)]);
    // Noise 20-35 dB under full scale of espeak's speech (about 0.02-0.1 amplitude).
    parts.push(mix(withGap, noise(withGap.length / RATE, pick(rand, COLOURS), 0.005 + rand() * 0.03)));
  }
  return concat(parts);
}

/** A sentence of household words without the wake phrase. */
function sentence(rand) {
  const n = 4 + Math.floor(rand() * 10);
  const words = [];
  for (let i = 0; i < n; i++) words.push(pick(rand, WORDS));
  // "hey" then "home" would be the wake phrase: never let the two meet.
  for (let i = 1; i < words.length; i++) if (words[i - 1] === 'hi' && words[i] === 'home') words[i] = 'house';
  return `${words.join(' ')}.`;
}

/**
 * About `seconds` of non-wake audio: sentences in varied voices with noise under them, and every
 * so often a stretch of noise alone (a fan, a tap running).
 */
export function negatives(part, seconds, seed) {
  const rand = random(seed);
  const parts = [];
  let total = 0;
  while (total < seconds * RATE) {
    let piece;
    if (rand() < 0.15) {
      piece = noise(3 + rand() * 10, pick(rand, COLOURS), 0.01 + rand() * 0.1);
    } else {
      const lines = [];
      for (let i = 0; i < 6; i++) lines.push(sentence(rand));
      const speech = concat([say(lines.join(' '), voiceOf(rand, part)), silence(0.3 + rand())]);
      piece = mix(speech, noise(speech.length / RATE, pick(rand, COLOURS), 0.005 + rand() * 0.03));
    }
    parts.push(piece);
    total += piece.length;
  }
  return concat(parts);
}
