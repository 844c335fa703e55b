/**
 * Text-to-speech through an OpenAI-compatible POST /audio/speech, asking for a WAV. Streaming
 * servers leave the WAV header sizes unknown (0xFFFFFFFF); they are fixed to the bytes received.
 */

import type { SynthesizedSpeech, SynthesizeOptions, TextToSpeech } from '../speech.js';
import { postOpenAi } from '../stt/openai-request.js';
import { checkText, speechFromWav, ttsError } from './tts-common.js';

export interface OpenAiTtsOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  voice: string;
  timeoutMs: number;
  maxChars: number;
}

/** About ten minutes of 24 kHz 16-bit mono: more is not a spoken answer. */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export class OpenAiTts implements TextToSpeech {
  readonly name = 'openai';

  constructor(private readonly options: OpenAiTtsOptions) {}

  async synthesize(text: string, options: SynthesizeOptions): Promise<SynthesizedSpeech> {
    checkText('openai', text, this.options.maxChars, options.signal);
    const response = await postOpenAi({
      baseUrl: this.options.baseUrl,
      apiKey: this.options.apiKey,
      path: '/audio/speech',
      body: JSON.stringify({ model: this.options.model, voice: this.options.voice, input: text, response_format: 'wav' }),
      timeoutMs: this.options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      maxResponseBytes: MAX_RESPONSE_BYTES,
      what: 'openai text-to-speech',
      fail: ttsError,
    });
    if (response.body.length === 0) throw ttsError('openai text-to-speech answered with no audio');
    return speechFromWav('openai text-to-speech', response.body);
  }
}
