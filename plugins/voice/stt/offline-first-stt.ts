/**
 * The local back end as the voice pipeline sees it (issue 30): the offline recogniser first; an
 * utterance it cannot place in the home's command grammar (an empty text) goes to the configured
 * open back end (plugin.voice.stt.fallback_backend) when there is one, else it is refused with
 * HA_ERR_VOICE_OFFLINE_ONLY, which the pipeline answers with "I only understand home commands
 * offline" in the listener's language.
 */
import { HomeAgentError } from '../../../src/sdk/index.js';
import type { PcmAudio, SpeechToText, TranscribeOptions, TranscriptResult } from '../speech.js';

export const OFFLINE_ONLY = 'HA_ERR_VOICE_OFFLINE_ONLY';

export class OfflineFirstStt implements SpeechToText {
  constructor(
    private readonly local: SpeechToText,
    /** The open back end as configured now (it follows its settings). */
    private readonly fallback: () => SpeechToText | undefined,
  ) {}

  get name(): string {
    const fallback = this.fallback();
    return fallback ? `${this.local.name}+${fallback.name}` : this.local.name;
  }

  async transcribe(audio: PcmAudio, options: TranscribeOptions): Promise<TranscriptResult> {
    const heard = await this.local.transcribe(audio, options);
    if (heard.text.trim() !== '') return heard;
    const fallback = this.fallback();
    if (fallback) return fallback.transcribe(audio, options);
    throw new HomeAgentError(OFFLINE_ONLY, 'the local recogniser heard no home command it knows, and no open back end is configured');
  }
}
