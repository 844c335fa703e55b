/** Messages between {@link OnnxEmbedder} (main thread) and its worker (onnx-worker.ts). */
import type { ErrorCode } from '../shared/errors.js';
import type { ModelManifest } from './model-manifest.js';

export interface OnnxWorkerInit {
  dir: string;
  manifest: ModelManifest;
  /** ONNX Runtime intra-op threads. */
  threads: number;
}

export type ToOnnxWorker = { t: 'embed'; id: number; texts: string[] } | { t: 'close' };

export type FromOnnxWorker =
  | { t: 'ready'; fingerprint: string }
  | { t: 'load_failed'; code: ErrorCode; message: string }
  /** `data` holds `texts.length × dim` floats, row by row (its buffer is transferred). */
  | { t: 'vectors'; id: number; data: Float32Array }
  | { t: 'failed'; id: number; code: ErrorCode; message: string }
  | { t: 'closed' };
