/** Messages between the voice activity detector and its worker thread (vad-worker.ts). */

export interface VadWorkerInit {
  /** The verified model bytes. */
  model: Uint8Array;
  sampleRate: 16000 | 8000;
}

export type ToVadWorker =
  /** Consecutive frames of the stream as floats in [-1, 1), a whole number of frames. */
  | { t: 'frames'; id: number; audio: Float32Array }
  /** Forget the model state and the context: a new stream starts. */
  | { t: 'reset' }
  | { t: 'close' };

export type FromVadWorker =
  | { t: 'ready' }
  | { t: 'failed'; message: string }
  /** One speech probability per frame of request `id`, and the time inference took. */
  | { t: 'probs'; id: number; probs: Float32Array; ms: number };

/** Samples per frame and of context (the end of the previous frame) the Silero v5 model expects. */
export function vadFrameSize(sampleRate: 16000 | 8000): { frame: number; context: number } {
  return sampleRate === 16000 ? { frame: 512, context: 64 } : { frame: 256, context: 32 };
}
