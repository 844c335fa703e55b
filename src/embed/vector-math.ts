/** Small vector helpers shared by the embedders. */
import { HomeAgentError } from '../shared/errors.js';

/** Scales `v` to unit length in place; a zero vector stays zero (empty text has no direction). */
export function l2NormalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (sum === 0 || !Number.isFinite(sum)) {
    // Inf/NaN from a broken model would poison every later comparison; zero says "no signal".
    if (!Number.isFinite(sum)) v.fill(0);
    return v;
  }
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * scale;
  return v;
}

/** The rejection every embedder gives for an aborted call. */
export function abortedError(signal: AbortSignal): HomeAgentError {
  return new HomeAgentError('HA_ERR_ABORTED', 'the embedding was cancelled', { cause: signal.reason });
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortedError(signal);
}
