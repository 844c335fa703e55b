/**
 * Voice activity detection for the microphone stream: cuts the stream into 32 ms frames, has the
 * Silero VAD v5 model (in a worker thread, vad-worker.ts) rate each one, and hands the
 * probabilities to the speech segmenter, which turns them into utterances. Frames are sent as soon
 * as they are complete; while the worker is busy they queue up and go in the next message, so a
 * slow moment costs fewer, larger messages rather than a growing backlog of small ones.
 */
import { Worker } from 'node:worker_threads';
import { HomeAgentError } from '../../../src/sdk/index.js';
import type { Utterance } from '../speech.js';
import { checkVadSettings, SpeechSegmenter, type VadSettings } from './speech-segmenter.js';
import { loadVadModel } from './vad-model.js';
import { type FromVadWorker, type ToVadWorker, type VadWorkerInit, vadFrameSize } from './vad-protocol.js';

export type { VadSettings } from './speech-segmenter.js';

export interface VadEvents {
  /** Speech was confirmed (min_speech_ms); the utterance follows when it ends. */
  onSpeechStart(atMs: number): void;
  onUtterance(utterance: Utterance): void;
  /** The detector stopped working (HA_ERR_VOICE_VAD, or a bad setting); open a new one. */
  onError?(error: Error): void;
}

export interface VadOpenOptions {
  sampleRate: 16000 | 8000;
  settings: () => VadSettings;
  events: VadEvents;
  /** The model file (tests); default: found by vad-model.ts. */
  modelPath?: string;
}

/** At most this many frames (2 s at 16 kHz) per message, so one answer never holds the stream up for long. */
const MAX_BATCH_FRAMES = 64;
const CLOSE_GRACE_MS = 2000;
const SAMPLE_SCALE = 1 / 32768;

// Compiled, the worker is the .js beside this module; from source (tests) the .ts, which the
// worker runs with the TypeScript loader it inherits through the process's execArgv.
const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './vad-worker.ts' : './vad-worker.js', import.meta.url);

function vadError(message: string, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_VOICE_VAD', message, cause === undefined ? {} : { cause });
}

export class VoiceActivityDetector {
  readonly stats = { frames: 0, inferenceMs: 0 };
  private readonly frameSize: number;
  private readonly segmenter: SpeechSegmenter;
  private readonly events: VadEvents;
  private pending: Int16Array[] = [];
  private pendingSamples = 0;
  private inFlight: { id: number; generation: number; audio: Int16Array } | undefined;
  private nextId = 0;
  private generation = 0;
  private failure: HomeAgentError | undefined;
  private closed = false;
  private waiters: { resolve(): void; reject(error: Error): void }[] = [];
  private readonly exited: Promise<void>;

  private constructor(
    private readonly worker: Worker,
    options: VadOpenOptions,
  ) {
    this.frameSize = vadFrameSize(options.sampleRate).frame;
    this.events = options.events;
    this.segmenter = new SpeechSegmenter(options.sampleRate, options.settings, options.events);
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (message: FromVadWorker) => this.onMessage(message));
    worker.on('error', (error) => this.fail(vadError(`the VAD worker failed: ${error.message}`, error)));
    worker.on('exit', (code) => this.fail(vadError(`the VAD worker stopped (exit code ${code})`)));
  }

  /** Loads and checks the model and starts the worker; rejects with HA_ERR_VOICE_VAD (or a settings error). */
  static async open(options: VadOpenOptions): Promise<VoiceActivityDetector> {
    checkVadSettings(options.settings());
    const model = loadVadModel(options.modelPath);
    const init: VadWorkerInit = { model, sampleRate: options.sampleRate };
    const worker = new Worker(WORKER_ENTRY, { workerData: init });
    await new Promise<void>((resolve, reject) => {
      const failed = (error: HomeAgentError): void => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        void worker.terminate();
        reject(error);
      };
      const onMessage = (message: FromVadWorker): void => {
        if (message.t === 'failed') failed(vadError(`the Silero VAD model could not be loaded: ${message.message}`));
        else if (message.t === 'ready') {
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          resolve();
        }
      };
      const onError = (error: Error): void => failed(vadError(`the VAD worker failed while loading: ${error.message}`, error));
      const onExit = (code: number): void => failed(vadError(`the VAD worker stopped while loading (exit code ${code})`));
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
    return new VoiceActivityDetector(worker, options);
  }

  /** Microphone audio in stream order, any length. Ignored once the detector failed or closed. */
  push(samples: Int16Array): void {
    if (this.failure || this.closed || samples.length === 0) return;
    this.pending.push(samples);
    this.pendingSamples += samples.length;
    this.pump();
  }

  /** Resolves once every whole frame pushed so far was rated (a partial frame waits for more audio). */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(vadError('the voice activity detector is closed'));
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Forgets the stream: queued audio, a rating in flight, an utterance under way, the model's state. */
  reset(): void {
    if (this.failure || this.closed) return;
    this.generation++;
    this.pending = [];
    this.pendingSamples = 0;
    this.segmenter.reset();
    this.post({ t: 'reset' });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settle(vadError('the voice activity detector is closed'));
    if (!this.failure) this.post({ t: 'close' });
    const timer = setTimeout(() => void this.worker.terminate(), CLOSE_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  private idle(): boolean {
    return this.inFlight === undefined && this.pendingSamples < this.frameSize;
  }

  private pump(): void {
    if (this.inFlight || this.failure || this.closed) return;
    const frames = Math.min(Math.floor(this.pendingSamples / this.frameSize), MAX_BATCH_FRAMES);
    if (frames === 0) return;
    const audio = this.take(frames * this.frameSize);
    const floats = new Float32Array(audio.length);
    for (let i = 0; i < audio.length; i++) floats[i] = (audio[i] ?? 0) * SAMPLE_SCALE;
    const id = this.nextId++;
    this.inFlight = { id, generation: this.generation, audio };
    this.post({ t: 'frames', id, audio: floats }, [floats.buffer]);
  }

  /** The first `count` queued samples, as one array. */
  private take(count: number): Int16Array {
    const out = new Int16Array(count);
    let at = 0;
    while (at < count) {
      const head = this.pending[0] as Int16Array;
      const used = Math.min(head.length, count - at);
      out.set(head.subarray(0, used), at);
      at += used;
      if (used === head.length) this.pending.shift();
      else this.pending[0] = head.subarray(used);
    }
    this.pendingSamples -= count;
    return out;
  }

  private onMessage(message: FromVadWorker): void {
    // After close() nothing more is reported, even for frames the worker finished meanwhile.
    if (message.t !== 'probs' || this.closed) return;
    const batch = this.inFlight;
    if (!batch || batch.id !== message.id) {
      this.fail(vadError(`the VAD worker answered request ${message.id}, which was not asked`));
      return;
    }
    this.inFlight = undefined;
    this.stats.inferenceMs += message.ms;
    if (batch.generation === this.generation) {
      try {
        for (let i = 0; i < message.probs.length; i++) {
          this.stats.frames++;
          this.segmenter.frame(batch.audio.subarray(i * this.frameSize, (i + 1) * this.frameSize), message.probs[i] ?? 0);
        }
      } catch (error) {
        this.fail(error instanceof HomeAgentError ? error : vadError(`speech segmenting failed: ${(error as Error).message}`, error));
        return;
      }
    }
    this.pump();
    if (this.idle()) this.settle();
  }

  private post(message: ToVadWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  /** Once: the detector is unusable from now on; tell the owner and whoever waits for a flush. */
  private fail(error: HomeAgentError): void {
    if (this.failure || this.closed) return;
    this.failure = error;
    this.inFlight = undefined;
    this.pending = [];
    this.pendingSamples = 0;
    this.settle(error);
    void this.worker.terminate();
    this.events.onError?.(error);
  }

  private settle(error?: Error): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  }
}
