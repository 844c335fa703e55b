/** The arithmetic of the retrieval evaluation, kept apart from running memories. */
import type { RecalledItem } from './eval-memory.js';

/** Share of `evidence` ids found among the sources of `items` (the top k, already cut to k). */
export function recallOf(evidence: readonly string[], items: readonly RecalledItem[]): number {
  if (evidence.length === 0) return 0;
  const found = new Set<string>();
  for (const item of items) for (const source of item.sources) found.add(source);
  let hits = 0;
  for (const id of evidence) if (found.has(id)) hits++;
  return hits / evidence.length;
}

/** Characters (Unicode code points, so a Chinese character counts once) the items put into a prompt. */
export function promptChars(items: readonly RecalledItem[]): number {
  let total = 0;
  for (const item of items) for (const _ of item.text) total++;
  return total;
}

/** Nearest-rank percentile (p in 0–100) of unsorted values; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

/** What one question scored at one k. */
export interface QuestionScore {
  recall: number;
  chars: number;
  ms: number;
}

/** Figures over a group of questions at one k. */
export interface Figures {
  questions: number;
  /** Mean recall@k. */
  recall: number;
  /** Mean prompt characters of the k items. */
  mean_chars: number;
  p50_ms: number;
  p95_ms: number;
}

export function summarise(scores: readonly QuestionScore[]): Figures {
  const n = scores.length;
  const mean = (pick: (s: QuestionScore) => number) => (n === 0 ? 0 : scores.reduce((sum, s) => sum + pick(s), 0) / n);
  const ms = scores.map((s) => s.ms);
  return {
    questions: n,
    recall: mean((s) => s.recall),
    mean_chars: mean((s) => s.chars),
    p50_ms: percentile(ms, 50),
    p95_ms: percentile(ms, 95),
  };
}

/** memory ÷ baseline, or null when the baseline figure is 0. */
export function ratio(memory: number, baseline: number): number | null {
  return baseline === 0 ? null : memory / baseline;
}
