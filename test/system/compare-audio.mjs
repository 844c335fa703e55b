#!/usr/bin/env node
/**
 * Is the announcement recorded on the loopback's capture side the speech espeak-ng makes for the
 * same text? Both are 16-bit mono WAV files at the same rate. The speech starts at the first sample
 * above a silence threshold. The reference's speech, aligned on the best shift near the recording's
 * onset, must correlate with the recording (normalised cross-correlation); the window must hold
 * about as many loud samples as the reference (not truncated), and the rest of the recording little
 * sound (not doubled). A truncated, doubled, resampled or garbled playback fails.
 * Why a little sound outside the window is allowed: in the VM, snd-aloop repeated a few milliseconds
 * of stale buffer (a 138-sample copy of part of the speech) about 0.3 s after a playback ended.
 *
 * Usage: node compare-audio.mjs REFERENCE.wav RECORDING.wav. Prints the measures; exits 1 on a mismatch.
 */
import { readFileSync } from 'node:fs';

const SILENCE = 300;
const MIN_CORRELATION = 0.9;
/** Loud samples missing from the window, or outside it, as a share of the reference's loud samples. */
const MAX_MISSING = 0.05;
const MAX_EXTRA = 0.05;
const SEARCH = 200;

function samples(path) {
  const buf = readFileSync(path);
  let offset = 12;
  let rate = 0;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    let size = buf.readUInt32LE(offset + 4);
    if (id === 'fmt ') rate = buf.readUInt32LE(offset + 12);
    if (id === 'data') {
      // espeak-ng --stdout and arecord to a pipe leave the size unset (0xffffffff).
      if (size === 0xffffffff || offset + 8 + size > buf.length) size = buf.length - offset - 8;
      const data = buf.subarray(offset + 8, offset + 8 + size - (size % 2));
      return { rate, pcm: new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length)) };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error(`${path}: no data chunk`);
}

const loud = (s) => Math.abs(s) > SILENCE;

/** The speech: from the first to the last loud sample. */
function speech(pcm) {
  const first = pcm.findIndex(loud);
  if (first < 0) return { onset: 0, pcm: pcm.subarray(0, 0) };
  let last = pcm.length - 1;
  while (last > first && !loud(pcm[last])) last--;
  return { onset: first, pcm: pcm.subarray(first, last + 1) };
}

function correlation(a, b, shift) {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    const j = i + shift;
    const y = j >= 0 && j < b.length ? b[j] : 0;
    ab += a[i] * y;
    aa += a[i] * a[i];
    bb += y * y;
  }
  return aa === 0 || bb === 0 ? 0 : ab / Math.sqrt(aa * bb);
}

const reference = samples(process.argv[2]);
const recording = samples(process.argv[3]);
const ref = speech(reference.pcm).pcm;
const rec = speech(recording.pcm);
let best = { shift: 0, r: -1 };
for (let shift = -SEARCH; shift <= SEARCH; shift++) {
  const r = correlation(ref, rec.pcm, shift);
  if (r > best.r) best = { shift, r };
}
const start = rec.onset + best.shift;
let inside = 0;
let outside = 0;
for (const [i, s] of recording.pcm.entries()) {
  if (!loud(s)) continue;
  if (i >= start && i < start + ref.length) inside++;
  else outside++;
}
const refLoud = ref.filter(loud).length || 1;
const missing = Math.max(0, refLoud - inside) / refLoud;
const extra = outside / refLoud;
const peak = (pcm) => pcm.reduce((m, s) => Math.max(m, Math.abs(s)), 0);
const percent = (x) => `${(x * 100).toFixed(1)} %`;
console.log(
  `reference speech ${ref.length} samples at ${reference.rate} Hz (peak ${peak(ref)}); recording at ${recording.rate} Hz, speech from ` +
    `sample ${rec.onset} (peak ${peak(rec.pcm)}); correlation ${best.r.toFixed(3)} at shift ${best.shift}; ` +
    `loud samples missing ${percent(missing)}, outside ${outside} (${percent(extra)})`,
);
const ok = reference.rate === recording.rate && ref.length > 0 && best.r >= MIN_CORRELATION && missing <= MAX_MISSING && extra <= MAX_EXTRA;
process.exit(ok ? 0 : 1);
