/**
 * Hybrid search: the lexical path (FTS5 BM25 over analyser tokens) and the vector path (cosine to
 * the query's embedding) each normalised by their best score for this query, then fused by a
 * weighted sum. Normalising per query puts BM25 (unbounded) and cosine (-1..1) on one 0..1 scale;
 * an entry missing from a path scores 0 there. Ties are broken by name so results are stable.
 */
import type { Embedder } from '../embed/embedder.js';
import type { KnowledgeIndex, ScoredId } from './knowledge-index.js';
import { snippet } from './knowledge-text.js';
import type { KnowledgeHit } from './types.js';

export interface FusionWeights {
  lexical: number;
  vector: number;
}

/**
 * Measured with the hash embedder on the evaluation library (test/fixtures/knowledge: 1,000
 * entries, 113 queries in Chinese and English; MRR@10 over three generated libraries): lexical
 * alone 0.921–0.923, 0.9/0.1 0.930–0.934 (best), 0.8/0.2 0.925–0.933, 0.6/0.4 0.913–0.919 (below
 * lexical alone), vector alone 0.78–0.80. The hash embedder's cosines are compressed (weak
 * candidates land at 0.3–0.5 of the best), so after normalisation a larger vector weight lets them
 * push out strong word matches; it mostly adds recall for typos and other segmentations.
 */
export const HASH_EMBEDDER_WEIGHTS: FusionWeights = { lexical: 0.9, vector: 0.1 };
/**
 * For model embedders (ONNX), whose vectors carry meaning the words do not: not measured yet
 * (no model on the evaluation machine); the knowledge evaluation (src/eval/knowledge) measures it
 * once one is installed.
 */
export const MODEL_EMBEDDER_WEIGHTS: FusionWeights = { lexical: 0.7, vector: 0.3 };

/** The fusion weights for an embedder, by its fingerprint. */
export function weightsFor(fingerprint: string | undefined): FusionWeights {
  return fingerprint?.startsWith('hash-ngram-') ? HASH_EMBEDDER_WEIGHTS : MODEL_EMBEDDER_WEIGHTS;
}

/** Candidates taken from the lexical path before fusion. */
export const LEXICAL_CANDIDATES = 200;
/**
 * Candidates taken from the vector path. Lexical candidates get their cosine anyway; an entry
 * found by meaning alone only reaches the top when it is near the top of this list.
 */
export const VECTOR_CANDIDATES = 50;

/** Below this cosine a vector hit is noise (the same floor memory's recall uses). */
export const MIN_VECTOR_COSINE = 0.2;

export interface SearchRequest {
  query: string;
  topK: number;
  category: string;
  paths: ReadonlyArray<'lexical' | 'vector'>;
}

export interface SearchDeps {
  index: KnowledgeIndex;
  indexText: (text: string) => string;
  tokens: (text: string) => string[];
  embedder: Embedder | undefined;
  weights: FusionWeights;
  signal?: AbortSignal;
}

/** One entry's normalised path scores and fused score. */
export interface Fused {
  id: number;
  lexical: number;
  vector: number;
  score: number;
}

/** Fuses per-path scores: each divided by that path's best (non-positive scores count as 0). */
export function fuse(lexical: readonly ScoredId[], vector: readonly ScoredId[], weights: FusionWeights): Fused[] {
  const out = new Map<number, Fused>();
  const add = (hits: readonly ScoredId[], key: 'lexical' | 'vector'): void => {
    const best = Math.max(0, ...hits.map((h) => h.score));
    if (best <= 0) return;
    for (const hit of hits) {
      if (hit.score <= 0) continue;
      const f = out.get(hit.id) ?? { id: hit.id, lexical: 0, vector: 0, score: 0 };
      f[key] = Math.max(f[key], hit.score / best);
      out.set(hit.id, f);
    }
  };
  add(lexical, 'lexical');
  add(vector, 'vector');
  for (const f of out.values()) f.score = weights.lexical * f.lexical + weights.vector * f.vector;
  return [...out.values()].filter((f) => f.score > 0);
}

export async function searchKnowledge(deps: SearchDeps, request: SearchRequest): Promise<KnowledgeHit[]> {
  const { index, embedder } = deps;
  const { query, topK, category, paths } = request;
  if (query.trim() === '' || topK <= 0) return [];
  const useLexical = paths.includes('lexical');
  const useVector = paths.includes('vector') && embedder !== undefined;
  const indexed = deps.indexText(query);
  const lexical = useLexical ? index.searchLexical(indexed, LEXICAL_CANDIDATES, category) : [];
  let vector: ScoredId[] = [];
  if (useVector) {
    const [q] = await embedder.embed([query], deps.signal);
    if (q?.some((x) => x !== 0)) {
      // An entry that shares no word with the query needs a clear cosine: without a floor,
      // per-query normalisation would turn the best of unrelated entries into a perfect match
      // and a question about nothing in the library would still get answers.
      vector = index.searchVector(q, Math.max(VECTOR_CANDIDATES, topK), category).filter((v) => v.score >= MIN_VECTOR_COSINE);
      // Lexical candidates the vector top list missed still get their true cosine.
      const seen = new Set(vector.map((v) => v.id));
      vector.push(
        ...index.vectorScores(
          q,
          lexical.map((l) => l.id).filter((id) => !seen.has(id)),
        ),
      );
    }
  }
  // With one path the other's weight would only scale every score alike.
  const weights = useLexical && useVector ? deps.weights : { lexical: useLexical ? 1 : 0, vector: useVector ? 1 : 0 };
  const fused = fuse(lexical, vector, weights);
  // Names are looked up only for what can make the cut: the top k and whatever ties with the last.
  fused.sort((a, b) => b.score - a.score);
  const last = fused[Math.min(topK, fused.length) - 1]?.score;
  const contenders = fused.filter((f, i) => i < topK || round(f.score) === round(last ?? Number.NaN));
  const names = index.names(contenders.map((f) => f.id));
  const top = contenders
    .flatMap((f) => {
      const row = names.get(f.id);
      return row ? [{ id: f.id, name: row.name, category: row.category, score: round(f.score) }] : [];
    })
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, topK);
  const terms = deps.tokens(query);
  return top.map((h) => ({ name: h.name, category: h.category, score: h.score, snippet: snippet(index.plain(h.id), terms) }));
}

/** Scores that differ only by floating-point noise count as ties (broken by name). */
function round(score: number): number {
  return Math.round(score * 1e9) / 1e9;
}
