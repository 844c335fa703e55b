/**
 * The contracts between the parts of the voice pipeline: audio as it leaves the microphone and the
 * voice activity detector, and the speech-to-text and text-to-speech back ends. Every back end
 * implements one of these so the pipeline never knows which one it talks to.
 */
import type { SynthesizedSpeech } from './tts-espeak.js';

export type { SynthesizedSpeech } from './tts-espeak.js';

/** The languages HomeAgent speaks and understands. */
export type SpeechLanguage = 'en' | 'zh';

/** 16-bit signed mono PCM at `sampleRate`. */
export interface PcmAudio {
  samples: Int16Array;
  sampleRate: number;
}

/** One stretch of speech cut out by the voice activity detector (pre-roll included). */
export interface Utterance extends PcmAudio {
  /** Where the speech began and ended, in ms of microphone stream time (samples / rate), pre-roll excluded. */
  speechStartMs: number;
  speechEndMs: number;
  /** True when max_utterance_ms cut it while the speech went on. */
  truncated: boolean;
}

export interface TranscribeOptions {
  /** A hint; absent lets the back end decide. */
  language?: SpeechLanguage;
  signal?: AbortSignal;
}

export interface TranscriptResult {
  /** Trimmed; empty when nothing was understood. */
  text: string;
  /** The language the back end reports, when it does. */
  language?: string;
}

/** A speech-to-text back end. Failures are HA_ERR_VOICE_STT (HA_ERR_VOICE_WYOMING from the Wyoming client). */
export interface SpeechToText {
  /** wyoming, openai or command: shown in the status and the log. */
  readonly name: string;
  transcribe(audio: PcmAudio, options: TranscribeOptions): Promise<TranscriptResult>;
}

export interface SynthesizeOptions {
  language: SpeechLanguage;
  signal?: AbortSignal;
}

/** A text-to-speech back end; it answers with a WAV whose header sizes are exact. Failures are HA_ERR_VOICE_TTS. */
export interface TextToSpeech {
  /** espeak, piper, wyoming or openai. */
  readonly name: string;
  synthesize(text: string, options: SynthesizeOptions): Promise<SynthesizedSpeech>;
}
