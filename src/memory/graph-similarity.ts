/**
 * Candidate pairs for the merge loop: entities whose names look alike (character-bigram Jaccard)
 * or whose vectors are close (cosine), above a threshold. The LLM decides on each pair; this only
 * finds them, cheaply: an inverted bigram index instead of comparing every pair.
 */

import type { VectorHit } from '../embed/vector-index.js';
import { jaccard, nameBigrams } from './graph-names.js';

export interface NameEntry {
  id: number;
  norm_name: string;
  type: string;
}

export interface SimilarPair {
  a: number;
  b: number;
  similarity: number;
  method: 'bigram' | 'vector';
}

export interface SimilarityInput {
  entities: readonly NameEntry[];
  /** Entities to find partners for (e.g. the most recently updated). */
  scan: readonly number[];
  /** Nearest vectors of an entity (its own id may be among them). */
  nearest: (id: number) => readonly VectorHit[];
  /** True when the pair must not be proposed (a no-merge mark). */
  blocked: (a: number, b: number) => boolean;
  /** Strictly above this similarity. */
  threshold: number;
  limit: number;
}

/** Postings longer than this are bigrams shared by too many names to tell anything apart. */
const MAX_POSTING = 500;

export function findSimilarPairs(input: SimilarityInput): SimilarPair[] {
  const byId = new Map(input.entities.map((e) => [e.id, e]));
  const grams = new Map<number, Set<string>>();
  const postings = new Map<string, number[]>();
  for (const e of input.entities) {
    const g = nameBigrams(e.norm_name);
    grams.set(e.id, g);
    for (const gram of g) {
      const list = postings.get(gram) ?? [];
      list.push(e.id);
      postings.set(gram, list);
    }
  }
  const best = new Map<string, SimilarPair>();
  const consider = (a: number, b: number, similarity: number, method: SimilarPair['method']) => {
    if (a === b || !(similarity > input.threshold)) return;
    const ea = byId.get(a);
    const eb = byId.get(b);
    if (!ea || !eb) return;
    // A person and a place of the same name are different things.
    if (ea.type !== '' && eb.type !== '' && ea.type !== eb.type) return;
    const [lo, hi] = a < b ? [a, b] : [b, a];
    if (input.blocked(lo, hi)) return;
    const key = `${lo}:${hi}`;
    const previous = best.get(key);
    if (!previous || previous.similarity < similarity) best.set(key, { a: lo, b: hi, similarity, method });
  };
  for (const id of input.scan) {
    const mine = grams.get(id);
    if (!mine) continue;
    const candidates = new Set<number>();
    for (const gram of mine) {
      const list = postings.get(gram) ?? [];
      if (list.length > MAX_POSTING) continue;
      for (const other of list) candidates.add(other);
    }
    for (const other of candidates) consider(id, other, jaccard(mine, grams.get(other) ?? new Set()), 'bigram');
    for (const hit of input.nearest(id)) consider(id, hit.id, hit.score, 'vector');
  }
  return [...best.values()].sort((x, y) => y.similarity - x.similarity || x.a - y.a || x.b - y.b).slice(0, Math.max(0, input.limit));
}
