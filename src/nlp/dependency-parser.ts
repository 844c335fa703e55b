/**
 * The Parse stage of extraction. A parser turns one tagged sentence into dependency arcs; the
 * extractor reads only arcs, so the model parser (onnx-dependency-parser.ts) and the rule parser
 * are interchangeable. Labels follow the LTP/HIT convention used by Chinese dependency treebanks.
 */
import type { TaggedWord } from './types.js';

/** Where a parse came from: a trained `model` (arc scores 0.75–0.9) or `rules` (template scores 0.45–0.7). */
export type ParseSource = 'model' | 'rules';

export const DEPENDENCY_LABELS = {
  HED: 'head of the sentence (its head is 0)',
  SBV: 'subject of a verb',
  VOB: 'direct object of a verb',
  IOB: 'indirect object',
  FOB: 'fronted object (把/被 constructions)',
  DBL: 'pivot (double) construction',
  ATT: 'attribute of a noun',
  ADV: 'adverbial of a verb, including a prepositional phrase',
  CMP: 'complement of a verb (住在 → 在, 搬到 → 到)',
  COO: 'coordination',
  POB: 'object of a preposition',
  LAD: 'left adjunct (a conjunction before its conjunct)',
  RAD: 'right adjunct (的, 了, 们, a trailing locative)',
  WP: 'punctuation',
} as const;

export type DependencyLabel = keyof typeof DEPENDENCY_LABELS;

export interface DependencyArc {
  /** 1-based index of the head word; 0 for the head of the sentence. */
  head: number;
  label: DependencyLabel;
  /** Model parses: the probability (0..1) the model gave this head. Absent from rule parses. */
  confidence?: number;
}

export interface DependencyParse {
  words: TaggedWord[];
  /** One arc per word, same order as `words`. */
  arcs: DependencyArc[];
  source: ParseSource;
}

/**
 * Parses one tagged sentence. Implementations must return exactly one arc per word. The rule
 * parser answers synchronously; a model parser answers with a promise (its inference runs in a
 * worker thread), so callers `await` the result either way.
 */
export interface DependencyParser {
  /** What the parser aims for; each parse says what it really came from (a model may fall back to rules). */
  readonly source: ParseSource;
  parse(words: readonly TaggedWord[]): DependencyParse | Promise<DependencyParse>;
  /** Frees what the parser holds (a worker thread, a model); absent when there is nothing to free. */
  close?(): Promise<void>;
}

export function isDependencyLabel(name: string): name is DependencyLabel {
  return Object.hasOwn(DEPENDENCY_LABELS, name);
}
