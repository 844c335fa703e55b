/**
 * Sentence embeddings from an installed ONNX model directory (see model-manifest.ts), computed in a
 * worker thread so that tokenizing and inference never block the daemon's event loop. Texts are
 * sorted by length and sent in batches (less padding); empty texts get the zero vector without a
 * model call. An aborted call rejects at once; the batch already in the worker finishes there and
 * is dropped.
 */
import { availableParallelism } from 'node:os';
import { HomeAgentError } from '../shared/errors.js';
import type { Embedder } from './embedder.js';
import { type ModelManifest, readModelManifest } from './model-manifest.js';
import { ModelWorkerClient, workerEntry } from './model-worker-client.js';
import type { EmbedAnswer, EmbedderReady, EmbedRequest, OnnxWorkerInit } from './onnx-protocol.js';
import { throwIfAborted } from './vector-math.js';

export interface OnnxEmbedderOptions {
  /** Texts per inference call (default 16). Larger batches are faster per text but pad more. */
  batchSize?: number;
  /** ONNX Runtime intra-op threads (default: cores − 1, at most 4, at least 1). */
  threads?: number;
  /** Cancels loading (the worker is stopped). */
  signal?: AbortSignal;
}

export const ONNX_DEFAULT_BATCH_SIZE = 16;

type EmbedWorker = ModelWorkerClient<EmbedderReady, EmbedRequest, EmbedAnswer>;

export class OnnxEmbedder implements Embedder {
  readonly dim: number;
  readonly fingerprint: string;
  /** The validated embedder.json of the loaded model. */
  readonly manifest: ModelManifest;
  readonly #batchSize: number;
  readonly #worker: EmbedWorker;

  private constructor(manifest: ModelManifest, fingerprint: string, worker: EmbedWorker, batchSize: number) {
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
    const workerData: OnnxWorkerInit = { dir, manifest, threads };
    const worker: EmbedWorker = ModelWorkerClient.spawn({
      entry: workerEntry(import.meta.url, 'onnx-worker'),
      workerData,
      name: 'the embedding worker',
      closedError,
      stoppedError: (stop, loading) => {
        if (!loading)
          return new HomeAgentError('HA_ERR_EMBED_FAILED', `the embedding worker stopped (${stop.why}); create the embedder again`);
        if (stop.error) {
          return new HomeAgentError('HA_ERR_EMBED_MODEL_LOAD', `the embedding worker failed while loading ${dir}: ${stop.error.message}`, {
            cause: stop.error,
          });
        }
        return new HomeAgentError('HA_ERR_EMBED_MODEL_LOAD', `the embedding worker exited (code ${stop.exitCode}) while loading ${dir}`);
      },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const ready = await worker.ready.catch(async (error: unknown) => {
      await worker.close();
      throw error;
    });
    return new OnnxEmbedder(manifest, ready.fingerprint, worker, batchSize);
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
    return this.#worker.close();
  }

  #usable(): void {
    const failure = this.#worker.failure;
    if (failure) throw failure;
  }

  async #request(texts: string[], signal: AbortSignal | undefined): Promise<Float32Array> {
    const answer = await this.#worker.request((id) => ({ t: 'embed', id, texts }), signal);
    return answer.data;
  }
}

function closedError(): HomeAgentError {
  return new HomeAgentError('HA_ERR_EMBED_CLOSED', 'the embedder was closed');
}
