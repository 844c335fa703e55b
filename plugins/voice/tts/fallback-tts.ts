/**
 * Keeps HomeAgent audible when the chosen text-to-speech back end fails (a Wyoming server down, no
 * piper model for the language, an API out of credit): espeak-ng speaks instead. The first failure
 * is a warning; while the back end keeps failing the repeats go to debug, so a dead server does not
 * fill the log with one warning per sentence. A cancelled turn is never retried. Without a
 * fallback (the chosen back end is espeak, or fallback_to_espeak is off) it only names the back end
 * in the result, so the caller always learns who spoke.
 */
import type { Logger } from '../../../src/sdk/index.js';
import type { SynthesizedSpeech, SynthesizeOptions, TextToSpeech } from '../speech.js';
import { ttsError } from './tts-common.js';

/** Synthesized speech with the name of the back end that actually spoke. */
export interface SpokenSpeech extends SynthesizedSpeech {
  backend: string;
}

export type FallbackLog = Pick<Logger, 'warn' | 'debug' | 'info'>;

export class FallbackTts implements TextToSpeech {
  readonly name: string;
  private failing = false;

  constructor(
    readonly primary: TextToSpeech,
    readonly fallback: TextToSpeech | undefined,
    private readonly log?: FallbackLog,
  ) {
    this.name = primary.name;
  }

  async synthesize(text: string, options: SynthesizeOptions): Promise<SpokenSpeech> {
    let primaryError: unknown;
    try {
      const speech = await this.primary.synthesize(text, options);
      if (this.failing) this.log?.info({ backend: this.primary.name }, 'text-to-speech back end works again');
      this.failing = false;
      return { ...speech, backend: this.primary.name };
    } catch (error) {
      if (options.signal?.aborted || !this.fallback) throw error;
      primaryError = error;
    }
    const fallback = this.fallback;
    const reason = primaryError instanceof Error ? primaryError.message : String(primaryError);
    const fields = { backend: this.primary.name, fallback: fallback.name, language: options.language, error: reason };
    if (this.failing) this.log?.debug(fields, 'text-to-speech back end failed again; falling back');
    else this.log?.warn(fields, `text-to-speech back end ${this.primary.name} failed; ${fallback.name} speaks instead`);
    this.failing = true;
    try {
      const speech = await fallback.synthesize(text, options);
      return { ...speech, backend: fallback.name };
    } catch (fallbackError) {
      const second = fallbackError instanceof Error ? fallbackError.message : String(fallbackError);
      throw ttsError(`${this.primary.name} failed (${reason}) and so did ${fallback.name} (${second})`, fallbackError);
    }
  }
}
