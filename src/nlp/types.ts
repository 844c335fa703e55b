/**
 * What the rest of the kernel needs from text processing. src/nlp implements it with
 * @node-rs/jieba for Chinese and rules for English; memory, knowledge and intent use only this.
 */

/** A word with its part-of-speech tag (jieba's tag set for Chinese, a small tag set for English). */
export interface TaggedWord {
  word: string;
  tag: string;
}

export interface Triple {
  subject: string;
  relation: string;
  object: string;
  /** 0..1: dependency arcs 0.75–0.9, templates 0.45–0.7, personal-fact rules as set there. */
  confidence: number;
  subject_type?: string;
  object_type?: string;
  /** The sentence the triple was read from (exact text). */
  sentence: string;
  /** Which path produced it: `dependency`, `template`, `personal`, `english`. */
  method: string;
}

export interface TextAnalyzer {
  /** Splits on 。！？；.!? and newlines; trims; drops empty pieces. */
  sentences(text: string): string[];
  /** Lower-cased search tokens (jieba words for Chinese, word stems for English), stop words removed. */
  tokens(text: string): string[];
  /** `tokens(text).join(' ')`: what goes into an FTS5 column and an FTS5 query. */
  indexText(text: string): string;
  /** Up to `k` keywords by TF-IDF. */
  keywords(text: string, k: number): string[];
  tag(text: string): TaggedWord[];
  /**
   * Subject–predicate–object triples with their sentences, after verification. Asynchronous
   * because a model parser answers from its worker thread; with the rule parser it settles at once.
   */
  extract(text: string, options?: { speaker?: string }): Promise<Triple[]>;
}
