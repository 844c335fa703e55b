/** Messages between {@link OnnxDependencyParser} (main thread) and its worker (onnx-parser-worker.ts). */
import type { ErrorCode } from '../shared/errors.js';
import type { DependencyArc } from './dependency-parser.js';

export interface ParserWorkerInit {
  dir: string;
  /** ONNX Runtime intra-op threads. */
  threads: number;
}

export type ToParserWorker = { t: 'parse'; id: number; words: string[]; tags: string[] } | { t: 'close' };

export type FromParserWorker =
  | { t: 'ready'; maxWords: number; labels: number; words: number }
  | { t: 'load_failed'; code: ErrorCode; message: string }
  | { t: 'parsed'; id: number; arcs: DependencyArc[] }
  | { t: 'failed'; id: number; code: ErrorCode; message: string }
  | { t: 'closed' };
