/**
 * Speech-to-text through a Wyoming server on the LAN (wyoming-faster-whisper, wyoming-whisper-cpp).
 * The client opens one connection per utterance; its failures stay HA_ERR_VOICE_WYOMING so the
 * status can tell "the server is down" from "the audio was refused".
 */
import type { PcmAudio, SpeechToText, TranscribeOptions, TranscriptResult } from '../speech.js';
import { WyomingClient, type WyomingClientOptions } from '../wyoming-client.js';
import { acceptTranscript, checkAudio, type LanguageSetting, languageHint, pcmBytes, sttError, throwIfAborted } from './stt-common.js';

export interface WyomingSttOptions extends Required<WyomingClientOptions> {
  language: LanguageSetting;
  maxOutputChars: number;
}

export class WyomingStt implements SpeechToText {
  readonly name = 'wyoming';
  private readonly client: WyomingClient;

  constructor(private readonly options: WyomingSttOptions) {
    this.client = new WyomingClient(options);
  }

  async transcribe(audio: PcmAudio, options: TranscribeOptions): Promise<TranscriptResult> {
    checkAudio(audio);
    throwIfAborted('wyoming', options.signal);
    const language = languageHint(options, this.options.language);
    const call = this.client.transcribe(pcmBytes(audio), {
      rate: audio.sampleRate,
      width: 2,
      channels: 1,
      ...(language ? { language } : {}),
    });
    const transcript = await abortable(call, options.signal);
    return acceptTranscript('the Wyoming server', transcript.text, this.options.maxOutputChars, transcript.language);
  }
}

/** The client has no cancel: a cancelled turn stops waiting, the connection ends at its timeout. */
function abortable<T>(call: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return call;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(sttError('wyoming speech-to-text was cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    call.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
