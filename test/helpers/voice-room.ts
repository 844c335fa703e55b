/**
 * A room's speaker without a sound card, for daemon tests of what HomeAgent says out loud: an ALSA
 * configuration (activated through ALSA_CONFIG_PATH in the daemon's env, never this process's)
 * whose playback `default` is a file-plugin PCM writing raw PCM to a file, and the checks that the
 * file holds exactly what espeak-ng makes of a text. The recipe is the one of
 * test/integration/voice-daemon.test.ts ("Audio without a sound card" in the shared
 * dependencies reference).
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { synthesizeEspeak } from '../../plugins/voice/tts-espeak.js';
import { parseWav } from '../../plugins/voice/wav.js';
import { tempDir } from './daemon.js';
import { until } from './until.js';

/** plugin.voice.tts.espeak_rate in the tests' configurations (the schema's default). */
export const ESPEAK_RATE = 175;
/** espeak-ng's output rate; aplay plays it as is to the file device. */
const ESPEAK_SAMPLE_RATE = 22_050;

export interface SpeakerRoom {
  dir: string;
  /** The raw PCM the speaker played, once it played anything. */
  out: string;
  /** For the daemon: ALSA_CONFIG_PATH naming the room's configuration. */
  env: Record<string, string>;
}

/** A fresh directory with the speaker's ALSA configuration. */
export function speakerRoom(t: Test): SpeakerRoom {
  const dir = tempDir(t, 'ha-voice-room-');
  const out = join(dir, 'speaker.raw');
  const conf = join(dir, 'asound.conf');
  writeFileSync(conf, `pcm.!default { type file; slave.pcm "null"; file "${out}"; format "raw" }\n`);
  return { dir, out, env: { ALSA_CONFIG_PATH: `/usr/share/alsa/alsa.conf:${conf}` } };
}

/** Waits until the speaker file holds at least `bytes` and stopped growing between two polls, and returns it. */
export async function spokenBytes(out: string, bytes: number, timeoutMs: number): Promise<Buffer> {
  let last = -1;
  return until(
    `the speaker wrote ${bytes} B`,
    () => {
      const size = existsSync(out) ? statSync(out).size : 0;
      const settled = size >= bytes && size === last;
      last = size;
      return settled ? readFileSync(out) : undefined;
    },
    timeoutMs,
  );
}

/** The PCM espeak-ng makes of `text` with the tests' English voice and rate. */
export async function expectedSpeech(text: string, rate = ESPEAK_RATE): Promise<Buffer> {
  const speech = await synthesizeEspeak(text, { language: 'en', rate, timeoutMs: 20_000 });
  const info = parseWav(speech.wav);
  return speech.wav.subarray(info.dataOffset, info.dataOffset + info.dataLength);
}

/** `written` is `expected` followed by at most aplay's padding of its last period. */
export function checkSpoken(t: Test, written: Buffer, expected: Buffer): void {
  // aplay pads the last period (a quarter of its 500 ms buffer) with silence.
  const periodBytes = Math.ceil(ESPEAK_SAMPLE_RATE * 0.125) * 2;
  const extra = written.length - expected.length;
  t.ok(extra >= 0 && extra <= periodBytes, `speaker got ${written.length} B for ${expected.length} B of speech`);
  t.ok(written.subarray(0, expected.length).equals(expected), 'the speaker got exactly the synthesized speech');
}
