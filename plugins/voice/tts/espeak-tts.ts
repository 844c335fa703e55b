/**
 * The default text-to-speech: espeak-ng on this machine, with the voices and rate from
 * plugin.voice.tts. It is also the fallback that speaks when another back end fails.
 */
import type { SpeechLanguage, SynthesizedSpeech, SynthesizeOptions, TextToSpeech } from '../speech.js';
import { synthesizeEspeak } from '../tts-espeak.js';
import { checkText } from './tts-common.js';

export interface EspeakTtsOptions {
  voices: Record<SpeechLanguage, string>;
  /** Words per minute. */
  rate: number;
  timeoutMs: number;
  maxChars: number;
  /** Environment for espeak-ng (its PATH); defaults to this process's. */
  env?: NodeJS.ProcessEnv;
}

export class EspeakTts implements TextToSpeech {
  readonly name = 'espeak';

  constructor(private readonly options: EspeakTtsOptions) {}

  async synthesize(text: string, options: SynthesizeOptions): Promise<SynthesizedSpeech> {
    checkText('espeak', text, this.options.maxChars, options.signal);
    return synthesizeEspeak(text, {
      language: options.language,
      voice: this.options.voices[options.language],
      rate: this.options.rate,
      timeoutMs: this.options.timeoutMs,
      maxChars: this.options.maxChars,
      ...(this.options.env ? { env: this.options.env } : {}),
    });
  }
}
