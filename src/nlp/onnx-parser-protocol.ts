/** Messages between {@link OnnxDependencyParser} (main thread) and its worker (onnx-parser-worker.ts). */
import type { DependencyArc } from './dependency-parser.js';

export interface ParserWorkerInit {
  dir: string;
  /** ONNX Runtime intra-op threads. */
  threads: number;
}

export type ParseRequest = { t: 'parse'; id: number; words: string[]; tags: string[] };

export type ParserReady = { t: 'ready'; maxWords: number; labels: number; words: number };

export type ParseAnswer = { t: 'parsed'; id: number; arcs: DependencyArc[] };
