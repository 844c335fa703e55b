/**
 * The knowledge search evaluation: queries with the entries that answer them, asked through
 * `KnowledgeBase.search` with the lexical path alone and with both paths (the default), scored as
 * MRR@k (reciprocal rank of the first right entry within the top k, 0 when none is there) and
 * recall@r (share of the right entries within the top r). The issue requires hybrid ≥ lexical.
 */

import type { KnowledgeBase, KnowledgeHit, KnowledgeSearchOptions } from '../../knowledge/types.js';
import { HomeAgentError } from '../../shared/errors.js';

export interface EvalQuery {
  id: string;
  query: string;
  /** Full names of the entries that answer the query; the first one found in the list counts. */
  expected: readonly string[];
  /** Groups the figures are also broken down by (e.g. `zh`, `paraphrase`). */
  lang?: string;
  kind?: string;
  category?: string;
}

export type SearchPaths = NonNullable<KnowledgeSearchOptions['paths']>;

export interface EvalOptions {
  /** The list length MRR is computed over; default 10. */
  k?: number;
  /** The list length recall is computed over; default 5. */
  recallK?: number;
  /** Milliseconds now; `performance.now` by default (latency is reported, never asserted). */
  now?: () => number;
}

/** What one query scored. */
export interface QueryScore {
  id: string;
  /** 1-based rank of the first expected entry within k, null when none is there. */
  rank: number | null;
  recall: number;
  ms: number;
  /** The names returned, best first. */
  top: string[];
}

/** Figures over a group of queries. */
export interface EvalFigures {
  queries: number;
  mrr: number;
  recall: number;
  /** Share of queries whose first result is right. */
  hit_at_1: number;
  p50_ms: number;
  p95_ms: number;
}

export interface PathRun {
  paths: SearchPaths | 'default';
  overall: EvalFigures;
  /** By `lang:<x>` and `kind:<x>`. */
  groups: Record<string, EvalFigures>;
  scores: QueryScore[];
}

export interface KnowledgeEvalResult {
  k: number;
  recall_k: number;
  lexical: PathRun;
  hybrid: PathRun;
}

type Searchable = Pick<KnowledgeBase, 'search'>;

export const DEFAULT_EVAL_K = 10;
export const DEFAULT_RECALL_K = 5;

/** Reciprocal rank (1-based) of the first name of `names` in `expected`, within the first k; 0 if none. */
export function reciprocalRank(names: readonly string[], expected: readonly string[], k: number): number {
  const wanted = new Set(expected);
  const at = names.slice(0, k).findIndex((n) => wanted.has(n));
  return at < 0 ? 0 : 1 / (at + 1);
}

/** Share of `expected` among the first k of `names`. */
export function recallAt(names: readonly string[], expected: readonly string[], k: number): number {
  if (expected.length === 0) return 0;
  const top = new Set(names.slice(0, k));
  return expected.filter((e) => top.has(e)).length / expected.length;
}

/** Nearest-rank percentile (p in 0–100); 0 for none. */
function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1] as number;
}

function figures(scores: readonly QueryScore[]): EvalFigures {
  const n = scores.length;
  const mean = (pick: (s: QueryScore) => number) => (n === 0 ? 0 : scores.reduce((sum, s) => sum + pick(s), 0) / n);
  const ms = scores.map((s) => s.ms);
  return {
    queries: n,
    mrr: mean((s) => (s.rank === null ? 0 : 1 / s.rank)),
    recall: mean((s) => s.recall),
    hit_at_1: mean((s) => (s.rank === 1 ? 1 : 0)),
    p50_ms: percentile(ms, 50),
    p95_ms: percentile(ms, 95),
  };
}

function grouped(queries: readonly EvalQuery[], scores: readonly QueryScore[]): Record<string, EvalFigures> {
  const groups = new Map<string, QueryScore[]>();
  queries.forEach((q, i) => {
    const score = scores[i] as QueryScore;
    for (const key of [q.lang && `lang:${q.lang}`, q.kind && `kind:${q.kind}`]) {
      if (!key) continue;
      const list = groups.get(key) ?? [];
      list.push(score);
      groups.set(key, list);
    }
  });
  return Object.fromEntries([...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, list]) => [key, figures(list)]));
}

function checkQueries(queries: readonly EvalQuery[]): void {
  if (queries.length === 0) throw new HomeAgentError('HA_ERR_EVAL_DATA', 'the knowledge evaluation needs at least one query');
  const ids = new Set<string>();
  for (const q of queries) {
    if (typeof q.query !== 'string' || q.query.trim() === '')
      throw new HomeAgentError('HA_ERR_EVAL_DATA', `query ${JSON.stringify(q.id)} has no text`);
    if (!Array.isArray(q.expected) || q.expected.length === 0)
      throw new HomeAgentError('HA_ERR_EVAL_DATA', `query ${JSON.stringify(q.id)} names no expected entry`);
    if (ids.has(q.id)) throw new HomeAgentError('HA_ERR_EVAL_DATA', `query id ${JSON.stringify(q.id)} is used twice`);
    ids.add(q.id);
  }
}

/** Asks every query with the given paths (both when absent) and scores the answers. */
export async function evaluatePaths(
  kb: Searchable,
  queries: readonly EvalQuery[],
  paths: SearchPaths | undefined,
  options: EvalOptions = {},
): Promise<PathRun> {
  checkQueries(queries);
  const k = options.k ?? DEFAULT_EVAL_K;
  const recallK = options.recallK ?? DEFAULT_RECALL_K;
  const now = options.now ?? (() => performance.now());
  const depth = Math.max(k, recallK);
  const scores: QueryScore[] = [];
  for (const q of queries) {
    const started = now();
    const hits = await kb.search(q.query, {
      top_k: depth,
      ...(paths === undefined ? {} : { paths }),
      ...(q.category === undefined ? {} : { category: q.category }),
    });
    const ms = now() - started;
    const top = hits.map((h) => h.name);
    const rr = reciprocalRank(top, q.expected, k);
    scores.push({ id: q.id, rank: rr === 0 ? null : Math.round(1 / rr), recall: recallAt(top, q.expected, recallK), ms, top });
  }
  return { paths: paths ?? 'default', overall: figures(scores), groups: grouped(queries, scores), scores };
}

/** Lexical-only against the default (hybrid) search on the same queries. */
export async function evaluateKnowledge(
  kb: Searchable,
  queries: readonly EvalQuery[],
  options: EvalOptions = {},
): Promise<KnowledgeEvalResult> {
  const lexical = await evaluatePaths(kb, queries, ['lexical'], options);
  const hybrid = await evaluatePaths(kb, queries, undefined, options);
  return { k: options.k ?? DEFAULT_EVAL_K, recall_k: options.recallK ?? DEFAULT_RECALL_K, lexical, hybrid };
}

/** MRR of one lexical/vector weight pair in a sweep. */
export interface WeightScore {
  lexical: number;
  vector: number;
  mrr: number;
  recall: number;
}

/**
 * MRR and recall for each weight pair, fusing the two single-path result lists the way the search
 * does (each path divided by its best score, weighted sum, ties by name). Asking each path once
 * per query and fusing here makes a sweep cheap; entries beyond `depth` of a path count as 0 there.
 */
export async function sweepWeights(
  kb: Searchable,
  queries: readonly EvalQuery[],
  pairs: ReadonlyArray<{ lexical: number; vector: number }>,
  options: EvalOptions & { depth?: number } = {},
): Promise<WeightScore[]> {
  checkQueries(queries);
  const k = options.k ?? DEFAULT_EVAL_K;
  const recallK = options.recallK ?? DEFAULT_RECALL_K;
  const depth = options.depth ?? 100;
  const runs: Array<{ q: EvalQuery; lexical: KnowledgeHit[]; vector: KnowledgeHit[] }> = [];
  for (const q of queries) {
    const base = { top_k: depth, ...(q.category === undefined ? {} : { category: q.category }) };
    runs.push({
      q,
      lexical: await kb.search(q.query, { ...base, paths: ['lexical'] }),
      vector: await kb.search(q.query, { ...base, paths: ['vector'] }),
    });
  }
  return pairs.map((pair) => {
    let mrr = 0;
    let recall = 0;
    for (const run of runs) {
      const names = fuseHits(run.lexical, run.vector, pair);
      mrr += reciprocalRank(names, run.q.expected, k);
      recall += recallAt(names, run.q.expected, recallK);
    }
    return { lexical: pair.lexical, vector: pair.vector, mrr: mrr / runs.length, recall: recall / runs.length };
  });
}

/** Names ranked by the weighted sum of each list's score over its best; ties by name. */
export function fuseHits(
  lexical: readonly KnowledgeHit[],
  vector: readonly KnowledgeHit[],
  weights: { lexical: number; vector: number },
): string[] {
  const scores = new Map<string, number>();
  const add = (hits: readonly KnowledgeHit[], weight: number): void => {
    const best = Math.max(0, ...hits.map((h) => h.score));
    if (best <= 0) return;
    for (const h of hits) if (h.score > 0) scores.set(h.name, (scores.get(h.name) ?? 0) + (weight * h.score) / best);
  };
  add(lexical, weights.lexical);
  add(vector, weights.vector);
  return [...scores.entries()]
    .filter(([, score]) => score > 0)
    .map(([name, score]) => ({ name, score: Math.round(score * 1e9) / 1e9 }))
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((e) => e.name);
}
