/** Messages between the wake word detector (wake-word.ts) and its worker thread (wake-word-worker.ts). */
import type { ErrorCode } from '../../../src/sdk/index.js';

export interface WakeWordWorkerInit {
  dir: string;
}

export type ToWakeWordWorker = { t: 'audio'; samples: Int16Array } | { t: 'flush'; id: number } | { t: 'close' };

export type FromWakeWordWorker =
  | { t: 'ready'; models: string[] }
  | { t: 'load_failed'; code: ErrorCode; message: string }
  /** Each model's score (in `models` order) for the chunk that ends at `endSample` of the stream. */
  | { t: 'scores'; endSample: number; scores: number[] }
  | { t: 'flushed'; id: number }
  /** Inference failed; the worker processes nothing more. */
  | { t: 'failed'; code: ErrorCode; message: string }
  | { t: 'closed' };
