/**
 * Chooses the Chinese dependency parser from configuration: the ONNX model parser when
 * core.agent.onnx_model_path names a model directory, the rule parser otherwise. Creating either
 * is free; the model is loaded on the first Chinese sentence.
 */
import type { Logger } from '../log/logger.js';
import type { DependencyParser } from './dependency-parser.js';
import { OnnxDependencyParser } from './onnx-dependency-parser.js';
import { RuleDependencyParser } from './rule-dependency-parser.js';

export interface DependencyParserChoice {
  /** core.agent.onnx_model_path; empty or blank: the rule parser. */
  modelPath: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** ONNX Runtime intra-op threads for the model (default 1). */
  threads?: number;
}

export function createDependencyParser(choice: DependencyParserChoice): DependencyParser {
  const dir = choice.modelPath.trim();
  if (dir === '') return new RuleDependencyParser();
  return new OnnxDependencyParser({ dir, log: choice.log, ...(choice.threads === undefined ? {} : { threads: choice.threads }) });
}
