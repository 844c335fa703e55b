/**
 * What the speech-to-text back ends share: their one error code, the language hint rule, the
 * transcript limit (plugin.voice.stt.max_output_chars) and the PCM bytes they send. Kept apart so
 * each back end module holds only the way it talks to its service.
 */
import { endianness } from 'node:os';
import { HomeAgentError } from '../../../src/sdk/index.js';
import type { PcmAudio, SpeechLanguage, TranscribeOptions, TranscriptResult } from '../speech.js';

export function sttError(message: string, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_VOICE_STT', message, cause === undefined ? {} : { cause });
}

/** The configured plugin.voice.stt.language: a fixed hint, or auto (let the back end decide). */
export type LanguageSetting = SpeechLanguage | 'auto';

/** The caller's hint wins; otherwise the configured language unless it is auto. */
export function languageHint(options: TranscribeOptions, configured: LanguageSetting): SpeechLanguage | undefined {
  return options.language ?? (configured === 'auto' ? undefined : configured);
}

/** A trimmed transcript, refused when longer than the limit (a runaway program, not speech). */
export function acceptTranscript(backend: string, text: string, maxChars: number, language?: string): TranscriptResult {
  const trimmed = text.trim();
  if (trimmed.length > maxChars) {
    throw sttError(`${backend} returned ${trimmed.length} characters, over plugin.voice.stt.max_output_chars (${maxChars})`);
  }
  return language ? { text: trimmed, language } : { text: trimmed };
}

/** The samples as S16LE bytes: a view on little-endian hosts, a copy elsewhere. */
export function pcmBytes(audio: PcmAudio): Buffer {
  const { samples } = audio;
  if (endianness() === 'LE') return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const bytes = Buffer.alloc(samples.length * 2);
  for (let index = 0; index < samples.length; index += 1) bytes.writeInt16LE(samples[index] ?? 0, index * 2);
  return bytes;
}

export function checkAudio(audio: PcmAudio): void {
  if (!Number.isSafeInteger(audio.sampleRate) || audio.sampleRate <= 0) {
    throw sttError(`audio sample rate must be a positive integer, got ${String(audio.sampleRate)}`);
  }
  if (audio.samples.length === 0) throw sttError('nothing to transcribe: the audio is empty');
}

/** Rejects at once when the caller already gave up. */
export function throwIfAborted(backend: string, signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw sttError(`${backend} speech-to-text was cancelled`);
}
