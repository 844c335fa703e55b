/**
 * Speech-to-text through an OpenAI-compatible POST /audio/transcriptions (OpenAI, or a local
 * whisper.cpp / faster-whisper server speaking the same API). The utterance goes up as a WAV in a
 * multipart form with the model and, when hinted, the language.
 */
import type { PcmAudio, SpeechToText, TranscribeOptions, TranscriptResult } from '../speech.js';
import { pcmToWav } from '../wav.js';
import { postOpenAi } from './openai-request.js';
import { acceptTranscript, checkAudio, type LanguageSetting, languageHint, pcmBytes, sttError } from './stt-common.js';

export interface OpenAiSttOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  language: LanguageSetting;
  maxOutputChars: number;
}

/** A transcript is text: an answer larger than this is not one. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

export class OpenAiStt implements SpeechToText {
  readonly name = 'openai';

  constructor(private readonly options: OpenAiSttOptions) {}

  async transcribe(audio: PcmAudio, options: TranscribeOptions): Promise<TranscriptResult> {
    checkAudio(audio);
    const language = languageHint(options, this.options.language);
    const wav = pcmToWav(pcmBytes(audio), audio.sampleRate, 1);
    const form = new FormData();
    form.append('file', new Blob([wav], { type: 'audio/wav' }), 'utterance.wav');
    form.append('model', this.options.model);
    if (language) form.append('language', language);
    form.append('response_format', 'json');
    const response = await postOpenAi({
      baseUrl: this.options.baseUrl,
      apiKey: this.options.apiKey,
      path: '/audio/transcriptions',
      body: form,
      timeoutMs: this.options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      maxResponseBytes: MAX_RESPONSE_BYTES,
      what: 'openai speech-to-text',
      fail: sttError,
    });
    let parsed: { text?: unknown; language?: unknown };
    try {
      parsed = JSON.parse(response.body.toString('utf8')) as typeof parsed;
    } catch (error) {
      throw sttError(`openai speech-to-text: the answer is not JSON: ${response.body.toString('utf8').slice(0, 200)}`, error);
    }
    if (typeof parsed?.text !== 'string') throw sttError('openai speech-to-text: the answer has no "text" string');
    const reported = typeof parsed.language === 'string' ? parsed.language : undefined;
    return acceptTranscript('openai speech-to-text', parsed.text, this.options.maxOutputChars, reported);
  }
}
