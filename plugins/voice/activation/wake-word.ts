/**
 * An openWakeWord-compatible wake word detector: the microphone's audio goes to a worker thread
 * (wake-word-worker.ts) that runs the melspectrogram, embedding and classifier models, and the
 * scores come back here, where the threshold (a live setting) turns them into detections. A score
 * stays above the threshold for several 80 ms steps while the word is said, so a detection is
 * reported once when the score rises past the threshold and again only after it has fallen below.
 */
import { Worker } from 'node:worker_threads';
import { HomeAgentError } from '../../../src/sdk/index.js';
import { WAKE_WORD_SAMPLE_RATE, wakeWordFiles } from './wake-word-files.js';
import type { FromWakeWordWorker, ToWakeWordWorker, WakeWordWorkerInit } from './wake-word-protocol.js';

export interface WakeWordDetection {
  /** The classifier's file name without .onnx. */
  model: string;
  score: number;
  /** Stream time (samples pushed / 16 kHz) at the end of the 80 ms step that crossed the threshold. */
  atMs: number;
}

export interface WakeWordDetectorOptions {
  /** Holds melspectrogram.onnx, embedding_model.onnx and the classifiers. */
  dir: string;
  /** Read for every score (plugin.voice.activation.wake_word_threshold). */
  threshold(): number;
  onDetection(detection: WakeWordDetection): void;
  /** Inference failed or the worker stopped; the detector hears nothing more. HA_ERR_VOICE_WAKE_WORD. */
  onError?(error: Error): void;
  /** The highest score of each model in each `scoreWindowMs` of audio, for the activation log's near misses. */
  onScore?(model: string, score: number, atMs: number): void;
  /** Default 1000 ms. */
  scoreWindowMs?: number;
}

/** How long close() lets the worker release its sessions before terminating it. */
const CLOSE_GRACE_MS = 2000;

/** The worker entry next to this module: the .ts under a TypeScript loader (tests), the .js in dist/. */
function workerEntry(): URL {
  return new URL(import.meta.url.endsWith('.ts') ? './wake-word-worker.ts' : './wake-word-worker.js', import.meta.url);
}

interface ScoreWindow {
  startMs: number;
  best: number;
  bestAtMs: number;
}

export class WakeWordDetector {
  readonly models: string[];
  readonly #options: WakeWordDetectorOptions;
  readonly #worker: Worker;
  readonly #exited: Promise<void>;
  readonly #above: boolean[];
  readonly #windows: Array<ScoreWindow | undefined>;
  readonly #flushes = new Map<number, () => void>();
  #nextFlush = 0;
  #stopped = false;
  #closing: Promise<void> | undefined;

  private constructor(options: WakeWordDetectorOptions, worker: Worker, exited: Promise<void>, models: string[]) {
    this.#options = options;
    this.#worker = worker;
    this.#exited = exited;
    this.models = models;
    this.#above = models.map(() => false);
    this.#windows = models.map(() => undefined);
  }

  /** Starts the worker and loads the models; rejects with HA_ERR_VOICE_WAKE_WORD naming the directory or file. */
  static async open(options: WakeWordDetectorOptions): Promise<WakeWordDetector> {
    wakeWordFiles(options.dir);
    const worker = new Worker(workerEntry(), { workerData: { dir: options.dir } satisfies WakeWordWorkerInit });
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const models = await new Promise<string[]>((resolve, reject) => {
      const failed = (error: HomeAgentError) => {
        worker.off('message', onMessage);
        void worker.terminate();
        reject(error);
      };
      const onMessage = (message: FromWakeWordWorker) => {
        worker.off('error', onError).off('exit', onExit);
        if (message.t === 'ready') {
          worker.off('message', onMessage);
          resolve(message.models);
        } else if (message.t === 'load_failed') failed(new HomeAgentError(message.code, message.message));
        else failed(new HomeAgentError('HA_ERR_VOICE_WAKE_WORD', `the wake word worker sent ${message.t} before it was ready`));
      };
      const onError = (error: Error) =>
        failed(
          new HomeAgentError('HA_ERR_VOICE_WAKE_WORD', `the wake word worker failed while loading: ${error.message}`, { cause: error }),
        );
      const onExit = (code: number) =>
        failed(new HomeAgentError('HA_ERR_VOICE_WAKE_WORD', `the wake word worker exited (code ${code}) while loading`));
      worker.on('message', onMessage).once('error', onError).once('exit', onExit);
    });
    const detector = new WakeWordDetector(options, worker, exited, models);
    worker.on('message', (message: FromWakeWordWorker) => detector.#onMessage(message));
    worker.on('error', (error) =>
      detector.#fail(new HomeAgentError('HA_ERR_VOICE_WAKE_WORD', `the wake word worker failed: ${error.message}`, { cause: error })),
    );
    worker.on('exit', (code) => detector.#fail(new HomeAgentError('HA_ERR_VOICE_WAKE_WORD', `the wake word worker exited (code ${code})`)));
    // Listening must not keep the daemon alive by itself; a pending flush does (see flush()).
    worker.unref();
    return detector;
  }

  /** 16 kHz mono samples, any length; copied, so the caller may reuse its buffer. Ignored once closed or failed. */
  push(samples: Int16Array): void {
    if (this.#stopped || samples.length === 0) return;
    const copy = samples.slice();
    this.#worker.postMessage({ t: 'audio', samples: copy } satisfies ToWakeWordWorker, [copy.buffer as ArrayBuffer]);
  }

  /** Resolves once every whole 80 ms step pushed so far has been scored (a partial step waits for more audio). */
  flush(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    const id = ++this.#nextFlush;
    return new Promise<void>((resolve) => {
      if (this.#flushes.size === 0) this.#worker.ref();
      this.#flushes.set(id, resolve);
      this.#worker.postMessage({ t: 'flush', id } satisfies ToWakeWordWorker);
    });
  }

  /** Releases the models and ends the worker; pending flushes resolve. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const wasRunning = !this.#stopped;
    this.#stopped = true;
    this.#settleFlushes();
    if (!wasRunning) {
      await this.#worker.terminate();
      return;
    }
    this.#worker.ref();
    const timer = setTimeout(() => void this.#worker.terminate(), CLOSE_GRACE_MS);
    this.#worker.postMessage({ t: 'close' } satisfies ToWakeWordWorker);
    await this.#exited;
    clearTimeout(timer);
  }

  #onMessage(message: FromWakeWordWorker): void {
    if (message.t === 'scores') this.#onScores(message.endSample, message.scores);
    else if (message.t === 'flushed') this.#settleFlush(message.id);
    else if (message.t === 'failed') this.#fail(new HomeAgentError(message.code, message.message));
  }

  #onScores(endSample: number, scores: number[]): void {
    if (this.#stopped) return;
    const atMs = Math.round((endSample * 1000) / WAKE_WORD_SAMPLE_RATE);
    const threshold = this.#options.threshold();
    scores.forEach((score, i) => {
      const model = this.models[i] as string;
      const above = score >= threshold;
      if (above && !this.#above[i]) this.#options.onDetection({ model, score, atMs });
      this.#above[i] = above;
      this.#trackScore(i, model, score, atMs);
    });
  }

  #trackScore(i: number, model: string, score: number, atMs: number): void {
    const onScore = this.#options.onScore;
    if (!onScore) return;
    const windowMs = this.#options.scoreWindowMs ?? 1000;
    let window = this.#windows[i];
    if (window && atMs - window.startMs > windowMs) {
      onScore(model, window.best, window.bestAtMs);
      window = undefined;
    }
    if (!window) this.#windows[i] = { startMs: atMs, best: score, bestAtMs: atMs };
    else if (score > window.best) {
      window.best = score;
      window.bestAtMs = atMs;
    }
  }

  /** The worker failed or stopped on its own: told once, then everything is ignored. */
  #fail(error: HomeAgentError): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#settleFlushes();
    void this.#worker.terminate();
    this.#options.onError?.(error);
  }

  #settleFlush(id: number): void {
    this.#flushes.get(id)?.();
    this.#flushes.delete(id);
    if (this.#flushes.size === 0 && !this.#stopped) this.#worker.unref();
  }

  #settleFlushes(): void {
    for (const resolve of this.#flushes.values()) resolve();
    this.#flushes.clear();
  }
}
