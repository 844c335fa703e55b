/**
 * The embedder contract. Every vector is stored with the fingerprint of the embedder that made it;
 * vectors of different fingerprints are never compared (they live in different spaces) and are
 * re-embedded in the background when the configured embedder changes.
 */
export interface Embedder {
  /** Vector length. */
  readonly dim: number;
  /**
   * Identifies the vector space: kind, model, dimension and anything else that changes the
   * vectors (e.g. `hash-ngram-v1-384`, `onnx:<sha256 of model.onnx>:384:mean:norm`).
   */
  readonly fingerprint: string;
  /** One unit-length (L2-normalised) vector per text, in order. Empty text gives a zero vector. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Releases workers and native sessions; the embedder is unusable afterwards. */
  close(): Promise<void>;
}

/** Cosine similarity of two unit vectors of the same space (their dot product). */
export function cosine(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let dot = 0;
  for (let i = 0; i < n; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}
