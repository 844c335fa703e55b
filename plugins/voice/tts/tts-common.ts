/**
 * What the text-to-speech back ends share: their error code, the refusal of empty or overlong
 * text before any program or server is asked, and turning a WAV from elsewhere into the exact-size
 * WAV the speaker expects.
 */
import { HomeAgentError, isHomeAgentError } from '../../../src/sdk/index.js';
import type { SynthesizedSpeech } from '../speech.js';
import { parseWav, withExactSizes } from '../wav.js';

export function ttsError(message: string, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_VOICE_TTS', message, cause === undefined ? {} : { cause });
}

export function checkText(backend: string, text: string, maxChars: number, signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw ttsError(`${backend} text-to-speech was cancelled`);
  if (text.trim() === '') throw ttsError('nothing to say: the text is empty');
  if (text.length > maxChars) throw ttsError(`the text has ${text.length} characters, over plugin.voice.tts.max_chars (${maxChars})`);
}

/** A WAV with header sizes fixed to the PCM present; one without audio is a failure. */
export function speechFromWav(backend: string, wav: Buffer): SynthesizedSpeech {
  let exact: Buffer;
  try {
    exact = withExactSizes(wav);
  } catch (error) {
    throw ttsError(
      `${backend} answered with audio that is not a PCM WAV: ${isHomeAgentError(error) ? error.message : String(error)}`,
      error,
    );
  }
  const info = parseWav(exact);
  if (info.bitsPerSample !== 16) throw ttsError(`${backend} answered with ${info.bitsPerSample}-bit audio; 16-bit PCM is needed`);
  if (info.dataLength === 0) throw ttsError(`${backend} produced no audio`);
  return { wav: exact, sampleRate: info.sampleRate, channels: info.channels, durationMs: info.durationMs };
}
