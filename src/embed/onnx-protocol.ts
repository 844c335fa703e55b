/** Messages between {@link OnnxEmbedder} (main thread) and its worker (onnx-worker.ts). */
import type { ModelManifest } from './model-manifest.js';

export interface OnnxWorkerInit {
  dir: string;
  manifest: ModelManifest;
  /** ONNX Runtime intra-op threads. */
  threads: number;
}

export type EmbedRequest = { t: 'embed'; id: number; texts: string[] };

export type EmbedderReady = { t: 'ready'; fingerprint: string };

/** `data` holds `texts.length × dim` floats, row by row (its buffer is transferred). */
export type EmbedAnswer = { t: 'vectors'; id: number; data: Float32Array };
