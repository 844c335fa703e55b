/**
 * A client for Wyoming speech servers on the LAN (faster-whisper for speech-to-text, piper for
 * text-to-speech). Each call opens one TCP connection, sends its events, waits for the answer and
 * closes the connection again: the servers keep no session, and a fresh connection per utterance
 * means a stuck server can never wedge the next call. Every wait is bounded by timeoutMs, and every
 * failure is one HomeAgentError('HA_ERR_VOICE_WYOMING') naming host:port and what went wrong.
 */
import { createConnection, type Socket } from 'node:net';
import { HomeAgentError } from '../../src/sdk/index.js';
import { encodeEvent, type WyomingEvent, WyomingEventDecoder } from './wyoming-events.js';

export const DEFAULT_WYOMING_TIMEOUT_MS = 30_000;
/** About four minutes of 22 kHz 16-bit mono speech; longer answers are refused, not buffered. */
export const DEFAULT_WYOMING_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

export interface WyomingClientOptions {
  host: string;
  port: number;
  /** The whole call (connect, send, answer) must finish within this. */
  timeoutMs?: number;
  /** The most audio accepted from the server: per event, and in total for one synthesize. */
  maxPayloadBytes?: number;
}

export interface AudioFormat {
  /** Samples per second. */
  rate: number;
  /** Bytes per sample. */
  width: number;
  channels: number;
}

export interface WyomingModel {
  name: string;
  languages: string[];
}

export interface WyomingProgram {
  name: string;
  /** ASR: the speech models; TTS: the voices. */
  models: WyomingModel[];
}

export interface WyomingInfo {
  asr: WyomingProgram[];
  tts: WyomingProgram[];
}

export interface Transcript {
  text: string;
  language?: string;
}

export interface SynthesizedAudio extends AudioFormat {
  pcm: Buffer;
}

/** What a call does with each event from the server: a value ends the call, undefined waits on. */
type EventHandler<T> = (event: WyomingEvent) => T | undefined;

function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function parsePrograms(value: unknown, modelKey: 'models' | 'voices'): WyomingProgram[] {
  if (!Array.isArray(value)) return [];
  const programs: WyomingProgram[] = [];
  for (const program of value) {
    if (typeof program !== 'object' || program === null) continue;
    const entry = program as Record<string, unknown>;
    const rawModels = Array.isArray(entry[modelKey]) ? (entry[modelKey] as unknown[]) : [];
    const models: WyomingModel[] = [];
    for (const model of rawModels) {
      if (typeof model !== 'object' || model === null) continue;
      const fields = model as Record<string, unknown>;
      models.push({ name: asString(fields.name) ?? '', languages: asStrings(fields.languages) });
    }
    programs.push({ name: asString(entry.name) ?? '', models });
  }
  return programs;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

export class WyomingClient {
  readonly host: string;
  readonly port: number;
  private readonly timeoutMs: number;
  private readonly maxPayloadBytes: number;

  constructor(options: WyomingClientOptions) {
    this.host = options.host;
    this.port = options.port;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_WYOMING_TIMEOUT_MS;
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_WYOMING_MAX_PAYLOAD_BYTES;
  }

  /** Which speech-to-text and text-to-speech programs the server offers, with models and languages. */
  describe(): Promise<WyomingInfo> {
    return this.exchange('describe', [{ type: 'describe', data: {} }], (event) =>
      event.type === 'info' ? { asr: parsePrograms(event.data.asr, 'models'), tts: parsePrograms(event.data.tts, 'voices') } : undefined,
    );
  }

  /** Sends raw PCM in chunks of at most one second and waits for the transcript. */
  transcribe(pcm: Buffer, options: AudioFormat & { language?: string }): Promise<Transcript> {
    const format = this.checkFormat(options);
    const bytesPerSecond = format.rate * format.width * format.channels;
    const events: WyomingEvent[] = [
      { type: 'transcribe', data: options.language ? { language: options.language } : {} },
      { type: 'audio-start', data: { ...format } },
    ];
    for (let offset = 0; offset < pcm.length; offset += bytesPerSecond) {
      events.push({ type: 'audio-chunk', data: { ...format }, payload: pcm.subarray(offset, offset + bytesPerSecond) });
    }
    events.push({ type: 'audio-stop', data: {} });
    return this.exchange('transcribe', events, (event) => {
      if (event.type !== 'transcript') return undefined;
      const language = asString(event.data.language);
      return language ? { text: asString(event.data.text) ?? '', language } : { text: asString(event.data.text) ?? '' };
    });
  }

  /** Asks for speech and collects the PCM chunks until audio-stop. */
  synthesize(text: string, options: { voice?: string; language?: string } = {}): Promise<SynthesizedAudio> {
    const voice: Record<string, string> = {};
    if (options.voice) voice.name = options.voice;
    if (options.language) voice.language = options.language;
    const data: Record<string, unknown> = Object.keys(voice).length > 0 ? { text, voice } : { text };
    let format: AudioFormat | undefined;
    const chunks: Buffer[] = [];
    let total = 0;
    return this.exchange('synthesize', [{ type: 'synthesize', data }], (event) => {
      if (event.type === 'audio-start' || event.type === 'audio-chunk') {
        format ??= this.readFormat(event);
        if (event.type === 'audio-chunk' && event.payload) {
          total += event.payload.length;
          if (total > this.maxPayloadBytes) throw this.failure(`synthesized audio is over the limit of ${this.maxPayloadBytes} bytes`);
          chunks.push(event.payload);
        }
        return undefined;
      }
      if (event.type !== 'audio-stop') return undefined;
      if (!format) throw this.failure('audio-stop arrived without audio-start, so the audio format is unknown');
      return { pcm: Buffer.concat(chunks, total), ...format };
    });
  }

  private checkFormat(options: AudioFormat): AudioFormat {
    for (const key of ['rate', 'width', 'channels'] as const) {
      if (!isPositiveInteger(options[key]))
        throw this.failure(`audio ${key} must be a positive integer, got ${JSON.stringify(options[key])}`);
    }
    return { rate: options.rate, width: options.width, channels: options.channels };
  }

  private readFormat(event: WyomingEvent): AudioFormat {
    const { rate, width, channels } = event.data;
    if (!isPositiveInteger(rate) || !isPositiveInteger(width) || !isPositiveInteger(channels)) {
      throw this.failure(`${event.type} has no valid audio format (rate, width, channels)`);
    }
    return { rate, width, channels };
  }

  private failure(problem: string, cause?: unknown): HomeAgentError {
    return new HomeAgentError(
      'HA_ERR_VOICE_WYOMING',
      `Wyoming server ${this.host}:${this.port}: ${problem}`,
      cause === undefined ? {} : { cause },
    );
  }

  /** One connection: send the events, feed answers to the handler until it returns a value. */
  private exchange<T>(what: string, events: WyomingEvent[], handle: EventHandler<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const decoder = new WyomingEventDecoder(this.maxPayloadBytes);
      let done = false;
      let socket: Socket | undefined;
      const finish = (error: HomeAgentError | undefined, value?: T): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        socket?.destroy();
        if (error) reject(error);
        else resolve(value as T);
      };
      const timer = setTimeout(() => finish(this.failure(`no answer to ${what} within ${this.timeoutMs} ms`)), this.timeoutMs);

      try {
        socket = createConnection({ host: this.host, port: this.port });
      } catch (error) {
        // A port out of range throws here rather than emitting 'error'.
        finish(this.failure(`${what} failed: ${(error as Error).message}`, error));
        return;
      }
      socket.on('connect', () => {
        for (const event of events) socket?.write(encodeEvent(event));
      });
      socket.on('data', (chunk: Buffer) => {
        if (done) return;
        try {
          for (const event of decoder.push(chunk)) {
            if (event.type === 'error') {
              const code = asString(event.data.code);
              const text = asString(event.data.text) ?? 'no reason given';
              finish(this.failure(`the server reported an error during ${what}: ${text}${code ? ` (${code})` : ''}`));
              return;
            }
            const value = handle(event);
            if (value !== undefined) {
              finish(undefined, value);
              return;
            }
          }
        } catch (error) {
          if (error instanceof HomeAgentError && error.message.startsWith('Wyoming server ')) finish(error);
          else finish(this.failure(error instanceof Error ? error.message : String(error), error));
        }
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        const reason = error.code === 'ECONNREFUSED' ? 'connection refused' : error.code === 'ENOTFOUND' ? 'host not found' : error.message;
        finish(this.failure(`${what} failed: ${reason}`, error));
      });
      socket.on('close', () => finish(this.failure(`the server closed the connection before answering ${what}`)));
    });
  }
}
