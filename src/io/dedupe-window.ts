/**
 * Duplicate-input detection: the same (source, channel, type, payload) seen again within a time
 * window. Keys are SHA-256 digests of the canonical JSON so large payloads (images as data URLs)
 * do not stay in memory for the whole window. The window suppresses repeats of an input that is
 * waiting, running or succeeded; the scheduler forgets the key of one that failed, so a retry is
 * never taken for a duplicate.
 */
import { createHash } from 'node:crypto';
import type { InputEvent } from './types.js';

/**
 * The identity of an input for dedupe purposes, or undefined when it cannot be serialised. A
 * client-kept conversation (`meta.history`) is part of it: the same question after a different
 * conversation is a new request.
 */
export function dedupeKey(
  input: Pick<InputEvent, 'source' | 'channel' | 'type' | 'payload'> & { meta?: InputEvent['meta'] },
): string | undefined {
  let json: string | undefined;
  try {
    const identity: unknown[] = [input.source, input.channel, input.type, input.payload];
    if (input.meta?.history !== undefined) identity.push(input.meta.history);
    json = JSON.stringify(identity);
  } catch {
    // Cyclic or BigInt payloads: such an input is simply never treated as a duplicate.
    return undefined;
  }
  if (json === undefined) return undefined;
  return createHash('sha256').update(json).digest('base64url');
}

export class DedupeWindow {
  /** key → the time it was accepted and a token naming who recorded it. Insertion order = time order. */
  readonly #seen = new Map<string, { at: number; token: object }>();

  /** True when `key` was recorded less than `windowMs` before `now`. Forgets expired keys on the way. */
  isDuplicate(key: string, now: number, windowMs: number): boolean {
    this.#prune(now, windowMs);
    const seen = this.#seen.get(key);
    return seen !== undefined && now - seen.at < windowMs;
  }

  record(key: string, now: number, token: object): void {
    // Delete first so the map stays ordered by time and pruning can stop at the first live key.
    this.#seen.delete(key);
    this.#seen.set(key, { at: now, token });
  }

  /** Forgets `key` if `token` recorded it last: an input that did not succeed must not block its retry. */
  forget(key: string, token: object): void {
    if (this.#seen.get(key)?.token === token) this.#seen.delete(key);
  }

  get size(): number {
    return this.#seen.size;
  }

  #prune(now: number, windowMs: number): void {
    for (const [key, seen] of this.#seen) {
      if (now - seen.at < windowMs) break;
      this.#seen.delete(key);
    }
  }
}
