/**
 * One dependency-parser model loaded into ONNX Runtime: encode → run → decode for one sentence.
 * Runs inside the parser's worker thread (onnx-parser-worker.ts), so it may block. The model
 * interface (docs/memory-parser.md): inputs `word_ids` and `tag_ids` int64 [1, n]; outputs
 * `arc_scores` float32 [1, n, n + 1] and `label_scores` float32 [1, n, labels].
 */
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { MODEL_FILE } from '../embed/model-manifest.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { DependencyArc } from './dependency-parser.js';
import { encodeWords, largestIds, type ParserManifest, readParserManifest } from './parser-manifest.js';
import { decodeArcs } from './tree-decoder.js';

export const PARSER_INPUTS = ['word_ids', 'tag_ids'] as const;
export const PARSER_OUTPUTS = ['arc_scores', 'label_scores'] as const;

export class OnnxParserModel {
  readonly manifest: ParserManifest;
  readonly #session: ort.InferenceSession;
  readonly #file: string;

  private constructor(manifest: ParserManifest, session: ort.InferenceSession, file: string) {
    this.manifest = manifest;
    this.#session = session;
    this.#file = file;
  }

  /**
   * Reads parser.json, loads model.onnx, checks its inputs and outputs against the interface and
   * runs one probe sentence made of the largest word and tag ids, so that a wrong output shape or
   * a table smaller than the vocabulary fails here and not on the first real sentence.
   */
  static async load(dir: string, threads: number): Promise<OnnxParserModel> {
    const manifest = readParserManifest(dir);
    const file = join(dir, MODEL_FILE);
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(file, {
        executionProviders: ['cpu'],
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
        // ORT's own warnings go to stderr, outside the JSON log; load and run errors reach us as exceptions.
        logSeverityLevel: 3,
      });
    } catch (error) {
      throw new HomeAgentError('HA_ERR_EMBED_MODEL_LOAD', `${file}: ONNX Runtime cannot load it: ${describeError(error)}`, {
        cause: error,
      });
    }
    try {
      checkInterface(session, manifest, file);
      const model = new OnnxParserModel(manifest, session, file);
      const largest = largestIds(manifest);
      try {
        await model.#arcs([largest.word, 0], [largest.tag, 0]);
      } catch (error) {
        if (error instanceof HomeAgentError && error.code === 'HA_ERR_EMBED_OUTPUT_SHAPE') throw error;
        throw new HomeAgentError(
          'HA_ERR_EMBED_MODEL_LOAD',
          `${file}: a probe sentence with word id ${largest.word} and tag id ${largest.tag} (the largest in parser.json) failed: ${describeError(error)}`,
          { cause: error },
        );
      }
      return model;
    } catch (error) {
      await session.release().catch(() => undefined);
      throw error;
    }
  }

  /** One arc per word, forming a tree (see tree-decoder.ts). */
  parse(words: readonly string[], tags: readonly string[]): Promise<DependencyArc[]> {
    const { wordIds, tagIds } = encodeWords(this.manifest, words, tags);
    return this.#arcs(wordIds, tagIds);
  }

  async release(): Promise<void> {
    await this.#session.release();
  }

  async #arcs(wordIds: readonly number[], tagIds: readonly number[]): Promise<DependencyArc[]> {
    const n = wordIds.length;
    const feeds = {
      word_ids: new ort.Tensor(
        'int64',
        BigInt64Array.from(wordIds, (v) => BigInt(v)),
        [1, n],
      ),
      tag_ids: new ort.Tensor(
        'int64',
        BigInt64Array.from(tagIds, (v) => BigInt(v)),
        [1, n],
      ),
    };
    let result: ort.InferenceSession.OnnxValueMapType;
    try {
      result = await this.#session.run(feeds, [...PARSER_OUTPUTS]);
    } catch (error) {
      throw new HomeAgentError('HA_ERR_EMBED_FAILED', `the parser model failed: ${describeError(error)}`, { cause: error });
    }
    const L = this.manifest.labels.length;
    const arcs = this.#output(result, 'arc_scores', [1, n, n + 1]);
    const labels = this.#output(result, 'label_scores', [1, n, L]);
    return decodeArcs(arcs, labels, n, this.manifest.labels);
  }

  #output(result: ort.InferenceSession.OnnxValueMapType, name: string, want: readonly number[]): Float32Array {
    const tensor = result[name] as ort.Tensor | undefined;
    const dims = tensor?.dims ?? [];
    if (tensor?.type !== 'float32' || dims.length !== want.length || dims.some((d, i) => d !== want[i])) {
      throw new HomeAgentError(
        'HA_ERR_EMBED_OUTPUT_SHAPE',
        `${this.#file}: output ${name} is ${tensor?.type ?? 'missing'} [${dims.join(', ')}] for ${want[1]} words; ` +
          `the parser interface expects float32 [${want.join(', ')}]` +
          (name === 'label_scores' ? ` (${want[2]} labels in parser.json)` : ' (a score per head 0..n, 0 = root)'),
      );
    }
    return tensor.data as Float32Array;
  }
}

/** Exactly the two int64 inputs, both outputs present, and declared shapes that can fit. */
function checkInterface(session: ort.InferenceSession, manifest: ParserManifest, file: string): void {
  const names = [...session.inputNames].sort().join(', ');
  if (names !== [...PARSER_INPUTS].sort().join(', '))
    throw new HomeAgentError(
      'HA_ERR_EMBED_MANIFEST',
      `${file}: the model's inputs are ${names || 'none'}; a parser model takes tag_ids and word_ids`,
    );
  for (const meta of session.inputMetadata) {
    const type = meta.isTensor ? meta.type : 'not a tensor';
    if (type !== 'int64')
      throw new HomeAgentError('HA_ERR_EMBED_MANIFEST', `${file}: the model input ${meta.name} is ${type}; it must be int64`);
  }
  for (const name of PARSER_OUTPUTS) {
    if (!session.outputNames.includes(name))
      throw new HomeAgentError(
        'HA_ERR_EMBED_MANIFEST',
        `${file}: the model has no output ${name} (it has ${session.outputNames.join(', ') || 'none'}); a parser model gives arc_scores and label_scores`,
      );
  }
  const labels = session.outputMetadata.find((m) => m.name === 'label_scores');
  const last = labels?.isTensor ? labels.shape[labels.shape.length - 1] : undefined;
  if (typeof last === 'number' && last !== manifest.labels.length)
    throw new HomeAgentError(
      'HA_ERR_EMBED_OUTPUT_SHAPE',
      `${file}: output label_scores is declared with ${last} labels; parser.json lists ${manifest.labels.length}`,
    );
}
