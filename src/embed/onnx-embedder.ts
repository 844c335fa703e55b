/**
 * Sentence embeddings from an installed ONNX model directory (see model-manifest.ts), computed in a
 * worker thread so that tokenizing and inference never block the daemon's event loop. Texts are
 * sorted by length and sent in batches (less padding); empty texts get the zero vector without a
 * model call. An aborted call rejects at once; the batch already in the worker finishes there and
 * is dropped.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { HomeAgentError } from '../shared/errors.js';
import type { Embedder } from './embedder.js';
import { type ModelManifest, readModelManifest } from './model-manifest.js';
import type { FromOnnxWorker, OnnxWorkerInit, ToOnnxWorker } from './onnx-protocol.js';
import { abortedError, throwIfAborted } from './vector-math.js';

export interface OnnxEmbedderOptions {
  /** Texts per inference call (default 16). Larger batches are faster per text but pad more. */
  batchSize?: number;
  /** ONNX Runtime intra-op threads (default: cores − 1, at most 4, at least 1). */
  threads?: number;
  /** Cancels loading (the worker is stopped). */
  signal?: AbortSignal;
}

export const ONNX_DEFAULT_BATCH_SIZE = 16;
/** How long close() waits for the worker to release the session before terminating it. */
const CLOSE_GRACE_MS = 2000;

interface Pending {
  resolve(data: Float32Array): void;
  reject(error: HomeAgentError): void;
}

export class OnnxEmbedder implements Embedder {
  readonly dim: number;
  readonly fingerprint: string;
  /** The validated embedder.json of the loaded model. */
  readonly manifest: ModelManifest;
  readonly #batchSize: number;
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #closing: Promise<void> | undefined;
  /** Set when the worker died on its own; every later call fails with it. */
  #dead: HomeAgentError | undefined;

  private constructor(manifest: ModelManifest, fingerprint: string, worker: Worker, batchSize: number) {
    this.manifest = manifest;
    this.dim = manifest.dim;
    this.fingerprint = fingerprint;
    this.#worker = worker;
    this.#batchSize = batchSize;
  }

  /**
   * Validates the directory and manifest, starts the worker and waits until the model is loaded and
   * a probe text went through it (so a wrong output shape fails here, not on the first real call).
   */
  static async create(dir: string, options: OnnxEmbedderOptions = {}): Promise<OnnxEmbedder> {
    const batchSize = options.batchSize ?? ONNX_DEFAULT_BATCH_SIZE;
    const threads = options.threads ?? Math.max(1, Math.min(4, availableParallelism() - 1));
    for (const [name, value, max] of [
      ['batchSize', batchSize, 1024],
      ['threads', threads, 64],
    ] as const) {
      if (!Number.isInteger(value) || value < 1 || value > max)
        throw new HomeAgentError('HA_ERR_EMBED_OPTIONS', `${name} must be an integer from 1 to ${max}, got ${value}`);
    }
    throwIfAborted(options.signal);
    const manifest = readModelManifest(dir);
    const init: OnnxWorkerInit = { dir, manifest, threads };
    // From src/ (tests, with a TypeScript loader) the worker is the .ts file, from dist/ the .js.
    const self = import.meta.url;
    const worker = new Worker(new URL(self.endsWith('.ts') ? './onnx-worker.ts' : './onnx-worker.js', self), { workerData: init });
    const fingerprint = await new Promise<string>((resolve, reject) => {
      const done = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        options.signal?.removeEventListener('abort', onAbort);
      };
      const onMessage = (message: FromOnnxWorker) => {
        done();
        if (message.t === 'ready') resolve(message.fingerprint);
        else if (message.t === 'load_failed') reject(new HomeAgentError(message.code, message.message));
        else reject(new HomeAgentError('HA_ERR_EMBED_MODEL_LOAD', `the embedding worker sent ${message.t} before it was ready`));
      };
      const onError = (error: Error) => {
        done();
        reject(
          new HomeAgentError('HA_ERR_EMBED_MODEL_LOAD', `the embedding worker failed while loading ${dir}: ${error.message}`, {
            cause: error,
          }),
        );
      };
      const onExit = (code: number) => {
        done();
        reject(new HomeAgentError('HA_ERR_EMBED_MODEL_LOAD', `the embedding worker exited (code ${code}) while loading ${dir}`));
      };
      const onAbort = () => {
        done();
        reject(abortedError(options.signal as AbortSignal));
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      options.signal?.addEventListener('abort', onAbort, { once: true });
    }).catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });
    const embedder = new OnnxEmbedder(manifest, fingerprint, worker, batchSize);
    embedder.#listen(worker);
    return embedder;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.#usable();
    throwIfAborted(signal);
    const out = texts.map(() => new Float32Array(this.dim));
    // Similar lengths in one batch: padding costs as much inference as real tokens.
    const order = texts
      .map((text, index) => ({ text, index }))
      .filter((item) => item.text.trim() !== '')
      .sort((a, b) => a.text.length - b.text.length);
    for (let at = 0; at < order.length; at += this.#batchSize) {
      const chunk = order.slice(at, at + this.#batchSize);
      const data = await this.#request(
        chunk.map((item) => item.text),
        signal,
      );
      // Copies, so that every vector owns its buffer (callers store `v.buffer`).
      chunk.forEach((item, k) => {
        out[item.index] = data.slice(k * this.dim, (k + 1) * this.dim);
      });
    }
    return out;
  }

  /** Stops the worker after it released the model; pending calls fail with HA_ERR_EMBED_CLOSED. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#failAll(new HomeAgentError('HA_ERR_EMBED_CLOSED', 'the embedder was closed'));
    const worker = this.#worker;
    this.#worker = undefined;
    if (!worker) return;
    worker.ref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
    worker.postMessage({ t: 'close' } satisfies ToOnnxWorker);
    await exited;
    clearTimeout(timer);
  }

  #usable(): void {
    if (this.#closing) throw new HomeAgentError('HA_ERR_EMBED_CLOSED', 'the embedder was closed');
    if (this.#dead) throw this.#dead;
  }

  #request(texts: string[], signal: AbortSignal | undefined): Promise<Float32Array> {
    this.#usable();
    const worker = this.#worker as Worker;
    return new Promise<Float32Array>((resolve, reject) => {
      const id = ++this.#nextId;
      const onAbort = () => {
        this.#settle(id);
        reject(abortedError(signal as AbortSignal));
      };
      this.#pending.set(id, {
        resolve: (data) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(data);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      // Only a worker with work in flight keeps the process alive.
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage({ t: 'embed', id, texts } satisfies ToOnnxWorker);
    });
  }

  /** Forgets a request; its answer, if it still comes, is dropped. */
  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker?.unref();
    return pending;
  }

  #failAll(error: HomeAgentError): void {
    const all = [...this.#pending.values()];
    this.#pending.clear();
    for (const pending of all) pending.reject(error);
  }

  #listen(worker: Worker): void {
    worker.unref();
    worker.on('message', (message: FromOnnxWorker) => {
      if (message.t === 'vectors') this.#settle(message.id)?.resolve(message.data);
      else if (message.t === 'failed') this.#settle(message.id)?.reject(new HomeAgentError(message.code, message.message));
    });
    const died = (why: string) => {
      if (this.#closing || this.#worker !== worker) return;
      this.#worker = undefined;
      this.#dead = new HomeAgentError('HA_ERR_EMBED_FAILED', `the embedding worker stopped (${why}); create the embedder again`);
      this.#failAll(this.#dead);
    };
    worker.on('error', (error) => died(error.message));
    worker.on('exit', (code) => died(`exit code ${code}`));
  }
}
