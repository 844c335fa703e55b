/**
 * The room speaker as an output channel: texts are synthesized and played, WAVs are played, one at
 * a time and in the order they were sent. Synthesis of queued texts starts at once (in parallel),
 * playback keeps the order. The queue is bounded so a runaway automation cannot pile up hours of
 * speech. Barge-in stops what plays and drops what waits.
 *
 * A missing or busy sound device never takes the daemon down: aplay fails in its own process and
 * the send fails with HA_ERR_SPEAKER_UNAVAILABLE. The problem is reported once through onProblem
 * (and again only after the speaker worked in between), not on every send.
 */
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { VoiceSayResult } from '../../src/sdk/api.js';
import { HomeAgentError, isHomeAgentError, type OutputEvent } from '../../src/sdk/index.js';
import type { SpeechLanguage, TextToSpeech } from './speech.js';
import { parseWav } from './wav.js';

/** The part of AplayPlayer the output uses (a fake in tests). */
export interface SpeakerPlayer {
  readonly device: string;
  readonly playing: boolean;
  play(wav: Buffer): Promise<{ played: boolean; stopped: boolean; ms: number }>;
  stop(): boolean;
  probe(): Promise<{ ok: true } | { ok: false; problem: string }>;
}

/** voice.say answers it as it is. */
export type PlayOutcome = VoiceSayResult;

export interface SpeakerOutputOptions {
  player: SpeakerPlayer;
  /** The text-to-speech back end in use now (settings may change it). */
  tts: () => TextToSpeech;
  /** Cuts a text to what is spoken and finds its language (speakableText + spokenLanguage). */
  speakable: (text: string) => { text: string; language: SpeechLanguage };
  /** Items waiting at most, the one playing excluded. */
  maxQueue?: number;
  /** The speaker's problem when it appears (a text), and undefined when it works again. */
  onProblem?: (problem: string | undefined) => void;
}

export const DEFAULT_MAX_QUEUE = 20;
/** Largest WAV file an audio send may name (about 30 minutes of 16-bit 24 kHz mono). */
const MAX_WAV_FILE_BYTES = 100 * 1024 * 1024;

interface Job {
  wav: Promise<Buffer>;
  done: (outcome: PlayOutcome) => void;
  fail: (error: unknown) => void;
  generation: number;
}

export interface SpeakerStatus {
  device: string;
  available: boolean;
  problem?: string;
  playing: boolean;
  queued: number;
}

export class SpeakerOutput {
  readonly #player: SpeakerPlayer;
  readonly #options: SpeakerOutputOptions;
  readonly #maxQueue: number;
  readonly #queue: Job[] = [];
  #running = false;
  #busy = false;
  /** Bumped by barge-in: jobs of an older generation are dropped instead of played. */
  #generation = 0;
  #problem: string | undefined;

  constructor(options: SpeakerOutputOptions) {
    this.#options = options;
    this.#player = options.player;
    this.#maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE;
  }

  /** Probes the device once, for the status line at start. */
  async probe(): Promise<void> {
    const result = await this.#player.probe();
    this.#setProblem(result.ok ? undefined : result.problem);
  }

  /** True while something plays or waits (barge-in matters only then). */
  get active(): boolean {
    return this.#busy || this.#queue.length > 0;
  }

  status(): SpeakerStatus {
    const problem = this.#problem;
    return {
      device: this.#player.device,
      available: problem === undefined,
      ...(problem === undefined ? {} : { problem }),
      playing: this.#player.playing,
      queued: this.#queue.length,
    };
  }

  /** Speaks a text; resolves when it was played (or dropped by barge-in). */
  say(text: string, language?: SpeechLanguage): Promise<PlayOutcome> {
    const spoken = this.#options.speakable(text);
    if (spoken.text.trim() === '') return Promise.resolve({ played: false, stopped: false });
    const lang = language ?? spoken.language;
    return this.#enqueue(() =>
      this.#options
        .tts()
        .synthesize(spoken.text, { language: lang })
        .then((speech) => speech.wav),
    );
  }

  /** Plays a WAV; resolves when it was played (or dropped by barge-in). */
  playWav(wav: Buffer): Promise<PlayOutcome> {
    return this.#enqueue(async () => {
      parseWav(wav);
      return wav;
    });
  }

  /** The output channel's send: text is spoken, audio (a WAV: bytes, data: URL or absolute file path) is played. */
  async send(event: OutputEvent): Promise<void> {
    if (event.type === 'audio') {
      await this.playWav(await wavOf(event.payload));
      return;
    }
    const text = typeof event.payload === 'string' ? event.payload : JSON.stringify(event.payload);
    const language = event.meta.language === 'zh' || event.meta.language === 'en' ? event.meta.language : undefined;
    await this.say(text, language);
  }

  /** Barge-in: stops the playback and drops the queue. Returns whether anything was stopped. */
  interrupt(): boolean {
    const had = this.active;
    this.#generation++;
    for (const job of this.#queue.splice(0)) job.done({ played: false, stopped: true });
    this.#player.stop();
    return had;
  }

  #enqueue(prepare: () => Promise<Buffer>): Promise<PlayOutcome> {
    if (this.#queue.length >= this.#maxQueue) {
      return Promise.reject(
        new HomeAgentError('HA_ERR_SPEAKER_UNAVAILABLE', `the speaker has ${this.#queue.length} items waiting; this one was not queued`),
      );
    }
    return new Promise<PlayOutcome>((done, fail) => {
      const wav = prepare();
      // A job dropped by barge-in may still fail to synthesize; nobody waits for it then.
      wav.catch(() => {});
      this.#queue.push({ wav, done, fail, generation: this.#generation });
      void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      for (let job = this.#queue.shift(); job; job = this.#queue.shift()) {
        this.#busy = true;
        await this.#playJob(job);
        this.#busy = false;
      }
    } finally {
      this.#busy = false;
      this.#running = false;
    }
  }

  async #playJob(job: Job): Promise<void> {
    let wav: Buffer;
    try {
      wav = await job.wav;
    } catch (error) {
      job.fail(error);
      return;
    }
    if (job.generation !== this.#generation) {
      job.done({ played: false, stopped: true });
      return;
    }
    try {
      const result = await this.#player.play(wav);
      this.#setProblem(undefined);
      job.done({ played: result.played, stopped: result.stopped });
    } catch (error) {
      if (isHomeAgentError(error, 'HA_ERR_SPEAKER_UNAVAILABLE')) this.#setProblem(error.message);
      job.fail(error);
    }
  }

  #setProblem(problem: string | undefined): void {
    if (problem === this.#problem || (problem !== undefined && this.#problem !== undefined)) return;
    this.#problem = problem;
    this.#options.onProblem?.(problem);
  }
}

async function wavOf(payload: unknown): Promise<Buffer> {
  if (Buffer.isBuffer(payload)) return payload;
  if (payload instanceof Uint8Array) return Buffer.from(payload);
  if (typeof payload === 'string') {
    const data = /^data:audio\/(?:x-)?wav;base64,(.*)$/s.exec(payload);
    if (data?.[1] !== undefined) return Buffer.from(data[1], 'base64');
    if (isAbsolute(payload) && payload.toLowerCase().endsWith('.wav')) {
      if ((await stat(payload)).size > MAX_WAV_FILE_BYTES) {
        throw new HomeAgentError('HA_ERR_MEDIA_TOO_LARGE', `${payload} is larger than 100 MB`);
      }
      return readFile(payload);
    }
  }
  throw new HomeAgentError(
    'HA_ERR_MEDIA_TYPE',
    'the speaker plays WAV audio: send the bytes, a data:audio/wav;base64 URL or the absolute path of a .wav file',
  );
}
