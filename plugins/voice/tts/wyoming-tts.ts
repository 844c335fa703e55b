/**
 * Text-to-speech through a Wyoming server on the LAN (wyoming-piper). The server streams raw PCM
 * chunks; they are wrapped in a WAV here. Failures are reported as HA_ERR_VOICE_TTS with the
 * Wyoming client's message (host, port, what went wrong) so the espeak fallback can take over.
 */
import { isHomeAgentError } from '../../../src/sdk/index.js';
import type { SynthesizedSpeech, SynthesizeOptions, TextToSpeech } from '../speech.js';
import { pcmToWav } from '../wav.js';
import { WyomingClient, type WyomingClientOptions } from '../wyoming-client.js';
import { checkText, speechFromWav, ttsError } from './tts-common.js';

export interface WyomingTtsOptions extends Required<WyomingClientOptions> {
  /** Voice name asked of the server; empty: its default for the language. */
  voice: string;
  maxChars: number;
}

export class WyomingTts implements TextToSpeech {
  readonly name = 'wyoming';
  private readonly client: WyomingClient;

  constructor(private readonly options: WyomingTtsOptions) {
    this.client = new WyomingClient(options);
  }

  async synthesize(text: string, options: SynthesizeOptions): Promise<SynthesizedSpeech> {
    checkText('wyoming', text, this.options.maxChars, options.signal);
    let audio: Awaited<ReturnType<WyomingClient['synthesize']>>;
    try {
      audio = await this.client.synthesize(text, {
        language: options.language,
        ...(this.options.voice ? { voice: this.options.voice } : {}),
      });
    } catch (error) {
      throw ttsError(isHomeAgentError(error) ? error.message : `Wyoming text-to-speech failed: ${String(error)}`, error);
    }
    if (options.signal?.aborted) throw ttsError('wyoming text-to-speech was cancelled');
    if (audio.width !== 2) throw ttsError(`the Wyoming server sent ${audio.width * 8}-bit audio; 16-bit PCM is needed`);
    return speechFromWav('the Wyoming server', pcmToWav(audio.pcm, audio.rate, audio.channels));
  }
}
