/**
 * The plain BM25 baseline of the retrieval evaluation: every turn is one item (`speaker: text`),
 * ranked by Okapi BM25 over that raw text, with no extraction, fusion or memory of any kind. Whatever the real
 * memory adds must beat this on the same questions.
 */
import type { EvalEvent, EvalMemory, RecalledItem } from './eval-memory.js';

/** Splits text into index terms. */
export type Tokenizer = (text: string) => string[];

export interface Bm25Options {
  /** Defaults to {@link wordTokens}. */
  tokens?: Tokenizer;
  /** Term-frequency saturation; 1.2 is the customary value. */
  k1?: number;
  /** Length normalisation; 0.75 is the customary value. */
  b?: number;
}

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/** Lower-cased runs of Unicode letters and digits: "I'm 34!" → ["i", "m", "34"]. */
export function wordTokens(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

interface Turn {
  text: string;
  source: string;
  length: number;
}

/** BM25 over raw turns, behind the same interface as the memory it is compared with. */
export class Bm25Memory implements EvalMemory {
  private readonly tokens: Tokenizer;
  private readonly k1: number;
  private readonly b: number;
  private readonly turns: Turn[] = [];
  /** term → [turn index, term frequency] pairs, in turn order. */
  private readonly postings = new Map<string, Array<[number, number]>>();
  private totalLength = 0;

  constructor(options: Bm25Options = {}) {
    this.tokens = options.tokens ?? wordTokens;
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
  }

  /** Indexes the turn as a transcript line, `speaker: text`: who said it is part of the turn. */
  async ingest(event: EvalEvent): Promise<void> {
    const text = `${event.speaker}: ${event.text}`;
    const terms = this.tokens(text);
    const index = this.turns.length;
    this.turns.push({ text, source: event.source_id, length: terms.length });
    this.totalLength += terms.length;
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    for (const [term, count] of counts) {
      let list = this.postings.get(term);
      if (list === undefined) {
        list = [];
        this.postings.set(term, list);
      }
      list.push([index, count]);
    }
  }

  /** Nothing runs in the background: the index is complete after each ingest. */
  async settle(): Promise<void> {}

  /**
   * The k best-scoring turns; turns sharing no term with the query are never returned, and equal
   * scores keep ingestion order so results are reproducible.
   */
  async recall(query: string, k: number): Promise<RecalledItem[]> {
    const count = this.turns.length;
    if (count === 0 || k <= 0) return [];
    const averageLength = this.totalLength / count || 1;
    const scores = new Map<number, number>();
    for (const term of new Set(this.tokens(query))) {
      const list = this.postings.get(term);
      if (list === undefined) continue;
      // The "+ 1" form of idf (as in Lucene) stays positive for terms in most turns.
      const idf = Math.log(1 + (count - list.length + 0.5) / (list.length + 0.5));
      for (const [index, frequency] of list) {
        const length = this.turns[index]?.length ?? 0;
        const norm = this.k1 * (1 - this.b + (this.b * length) / averageLength);
        const gain = (idf * frequency * (this.k1 + 1)) / (frequency + norm);
        scores.set(index, (scores.get(index) ?? 0) + gain);
      }
    }
    return [...scores]
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, k)
      .map(([index, score]) => {
        const turn = this.turns[index] as Turn;
        return { text: turn.text, sources: [turn.source], score };
      });
  }

  async close(): Promise<void> {
    this.turns.length = 0;
    this.postings.clear();
    this.totalLength = 0;
  }
}
