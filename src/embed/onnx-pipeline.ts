/**
 * Tokenize → run → pool → normalise for one sentence-embedding model. Runs inside the embedder's
 * worker thread (onnx-worker.ts), so everything here may block: tokenizing is synchronous JS and
 * hashing the model file reads it whole.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { MANIFEST_FILE, MODEL_FILE, type ModelManifest, TOKENIZER_CONFIG_FILE, TOKENIZER_FILE } from './model-manifest.js';
import { l2NormalizeInPlace } from './vector-math.js';

type IdType = 'int64' | 'int32';
type Role = keyof ModelManifest['inputs'];

/** The text used to check the model once at load time (its output shape, that it runs at all). */
const PROBE_TEXT = 'hello world 你好';

export class OnnxPipeline {
  readonly fingerprint: string;
  readonly #manifest: ModelManifest;
  readonly #tokenizer: Tokenizer;
  readonly #session: ort.InferenceSession;
  readonly #output: string;
  readonly #inputTypes: ReadonlyMap<Role, IdType>;
  readonly #specialIds: ReadonlySet<number>;
  readonly #padId: number;

  private constructor(init: {
    fingerprint: string;
    manifest: ModelManifest;
    tokenizer: Tokenizer;
    session: ort.InferenceSession;
    output: string;
    inputTypes: ReadonlyMap<Role, IdType>;
    specialIds: ReadonlySet<number>;
    padId: number;
  }) {
    this.fingerprint = init.fingerprint;
    this.#manifest = init.manifest;
    this.#tokenizer = init.tokenizer;
    this.#session = init.session;
    this.#output = init.output;
    this.#inputTypes = init.inputTypes;
    this.#specialIds = init.specialIds;
    this.#padId = init.padId;
  }

  /** Loads tokenizer and model, checks them against the manifest and runs one probe text. */
  static async load(dir: string, manifest: ModelManifest, threads: number): Promise<OnnxPipeline> {
    const tokenizer = loadTokenizer(dir);
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(join(dir, MODEL_FILE), {
        executionProviders: ['cpu'],
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
      });
    } catch (error) {
      throw new HomeAgentError(
        'HA_ERR_EMBED_MODEL_LOAD',
        `${join(dir, MODEL_FILE)}: ONNX Runtime cannot load it: ${describeError(error)}`,
        {
          cause: error,
        },
      );
    }
    try {
      const where = join(dir, MANIFEST_FILE);
      const inputTypes = checkInputs(session, manifest, where);
      const output = manifest.output ?? session.outputNames[0];
      if (output === undefined || !session.outputNames.includes(output)) {
        throw new HomeAgentError(
          'HA_ERR_EMBED_MANIFEST',
          `${where}: output ${JSON.stringify(output)} is not an output of the model (it has ${session.outputNames.join(', ') || 'none'})`,
        );
      }
      checkDeclaredOutput(session, output, manifest);
      const specialIds = new Set<number>();
      for (const [id, token] of tokenizer.get_added_tokens_decoder()) if (token.special) specialIds.add(id);
      const padId = manifest.pad_token_id ?? tokenizer.token_to_id('[PAD]') ?? tokenizer.token_to_id('<pad>') ?? 0;
      const pipeline = new OnnxPipeline({
        fingerprint: await fingerprintOf(dir, manifest),
        manifest,
        tokenizer,
        session,
        output,
        inputTypes,
        specialIds,
        padId,
      });
      await pipeline.embed([PROBE_TEXT]);
      return pipeline;
    } catch (error) {
      await session.release().catch(() => undefined);
      throw error;
    }
  }

  /** Unit vectors of non-empty texts, row by row (`texts.length × dim`). */
  async embed(texts: readonly string[]): Promise<Float32Array> {
    const { dim } = this.#manifest;
    const encoded = texts.map((text) => this.#encode(text));
    const n = encoded.length;
    const width = Math.max(1, ...encoded.map((e) => e.ids.length));
    const ids = new Array<number>(n * width).fill(this.#padId);
    const mask = new Array<number>(n * width).fill(0);
    const types = new Array<number>(n * width).fill(0);
    encoded.forEach((e, row) => {
      for (let i = 0; i < e.ids.length; i++) {
        ids[row * width + i] = e.ids[i] as number;
        mask[row * width + i] = 1;
        types[row * width + i] = e.types[i] ?? 0;
      }
    });
    const feeds: Record<string, ort.Tensor> = {};
    const values: Record<Role, number[]> = { input_ids: ids, attention_mask: mask, token_type_ids: types };
    for (const [role, type] of this.#inputTypes) {
      const name = this.#manifest.inputs[role] as string;
      const data = type === 'int64' ? BigInt64Array.from(values[role], (v) => BigInt(v)) : Int32Array.from(values[role]);
      feeds[name] = new ort.Tensor(type, data, [n, width]);
    }

    let tensor: ort.Tensor;
    try {
      const result = await this.#session.run(feeds, [this.#output]);
      tensor = result[this.#output] as ort.Tensor;
    } catch (error) {
      throw new HomeAgentError('HA_ERR_EMBED_FAILED', `the embedding model failed: ${describeError(error)}`, { cause: error });
    }
    const shape = tensor.dims;
    const pooled = this.#manifest.pooling === 'none';
    const fits = pooled
      ? shape.length === 2 && shape[0] === n && shape[1] === dim
      : shape.length === 3 && shape[0] === n && shape[1] === width && shape[2] === dim;
    if (!fits || tensor.type !== 'float32') {
      throw new HomeAgentError(
        'HA_ERR_EMBED_OUTPUT_SHAPE',
        `model output ${this.#output} is ${tensor.type} [${shape.join(', ')}] for ${n} text(s) of ${width} token(s); ` +
          `embedder.json (pooling ${this.#manifest.pooling}, dim ${dim}) expects float32 ${pooled ? `[${n}, ${dim}]` : `[${n}, ${width}, ${dim}]`}`,
      );
    }
    const data = tensor.data as Float32Array;
    const out = new Float32Array(n * dim);
    for (let row = 0; row < n; row++) {
      const target = out.subarray(row * dim, (row + 1) * dim);
      if (pooled) target.set(data.subarray(row * dim, (row + 1) * dim));
      else if (this.#manifest.pooling === 'cls') target.set(data.subarray(row * width * dim, row * width * dim + dim));
      else {
        let count = 0;
        for (let t = 0; t < width; t++) {
          if (mask[row * width + t] !== 1) continue;
          count++;
          const base = (row * width + t) * dim;
          for (let d = 0; d < dim; d++) target[d] = (target[d] as number) + (data[base + d] as number);
        }
        for (let d = 0; d < dim; d++) target[d] = (target[d] as number) / Math.max(1, count);
      }
      l2NormalizeInPlace(target);
    }
    return out;
  }

  async release(): Promise<void> {
    await this.#session.release();
  }

  /** Token ids (special tokens included) cut to max_tokens, keeping a closing special token. */
  #encode(text: string): { ids: number[]; types: number[] } {
    const wantTypes = this.#inputTypes.has('token_type_ids');
    const encoding = wantTypes ? this.#tokenizer.encode(text, { return_token_type_ids: true }) : this.#tokenizer.encode(text);
    let ids = encoding.ids;
    let types = encoding.token_type_ids ?? [];
    const max = this.#manifest.max_tokens;
    if (ids.length > max) {
      const last = ids[ids.length - 1] as number;
      // BERT-style models were trained with [SEP] at the end; keep it when cutting.
      const keepLast = max > 1 && this.#specialIds.has(last);
      ids = keepLast ? [...ids.slice(0, max - 1), last] : ids.slice(0, max);
      types = keepLast ? [...types.slice(0, max - 1), types[types.length - 1] ?? 0] : types.slice(0, max);
    }
    return { ids, types };
  }
}

function loadTokenizer(dir: string): Tokenizer {
  const file = join(dir, TOKENIZER_FILE);
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as object;
    const configFile = join(dir, TOKENIZER_CONFIG_FILE);
    const config = existsSync(configFile) ? (JSON.parse(readFileSync(configFile, 'utf8')) as object) : {};
    return new Tokenizer(json, config);
  } catch (error) {
    throw new HomeAgentError('HA_ERR_EMBED_MODEL_LOAD', `${file}: the tokenizer cannot be loaded: ${describeError(error)}`, {
      cause: error,
    });
  }
}

/** Every graph input needs a role (we could not feed it otherwise) and every role a graph input. */
function checkInputs(session: ort.InferenceSession, manifest: ModelManifest, where: string): Map<Role, IdType> {
  const byName = new Map<string, Role>();
  for (const [role, name] of Object.entries(manifest.inputs) as Array<[Role, string]>) byName.set(name, role);
  const types = new Map<Role, IdType>();
  for (const [name, role] of byName) {
    if (!session.inputNames.includes(name)) {
      throw new HomeAgentError(
        'HA_ERR_EMBED_MANIFEST',
        `${where}: inputs.${role} names ${JSON.stringify(name)}, which is not an input of the model (it has ${session.inputNames.join(', ')})`,
      );
    }
  }
  for (const meta of session.inputMetadata) {
    const role = byName.get(meta.name);
    if (role === undefined) {
      throw new HomeAgentError(
        'HA_ERR_EMBED_MANIFEST',
        `${where}: the model input ${JSON.stringify(meta.name)} has no role in inputs (input_ids, attention_mask, token_type_ids)`,
      );
    }
    const type = meta.isTensor ? meta.type : 'not a tensor';
    if (type !== 'int64' && type !== 'int32') {
      throw new HomeAgentError(
        'HA_ERR_EMBED_MANIFEST',
        `${where}: the model input ${meta.name} is ${type}; token inputs must be int64 or int32`,
      );
    }
    types.set(role, type);
  }
  return types;
}

/** Rejects a declared output shape that cannot fit before anything runs (symbolic dims pass). */
function checkDeclaredOutput(session: ort.InferenceSession, output: string, manifest: ModelManifest): void {
  const meta = session.outputMetadata.find((m) => m.name === output);
  if (!meta?.isTensor || meta.shape.length === 0) return;
  const rank = manifest.pooling === 'none' ? 2 : 3;
  const last = meta.shape[meta.shape.length - 1];
  if (meta.shape.length !== rank || (typeof last === 'number' && last !== manifest.dim)) {
    throw new HomeAgentError(
      'HA_ERR_EMBED_OUTPUT_SHAPE',
      `model output ${output} is declared [${meta.shape.join(', ')}]; embedder.json (pooling ${manifest.pooling}, dim ${manifest.dim}) ` +
        `expects ${rank === 2 ? `[batch, ${manifest.dim}]` : `[batch, tokens, ${manifest.dim}]`}`,
    );
  }
}

/**
 * `onnx:<sha256 of model, tokenizer and manifest, 16 hex>:<dim>:<pooling>:<norm|raw>`. The
 * tokenizer and manifest are hashed too: a different vocabulary or pooling gives other vectors
 * from the same weights.
 */
async function fingerprintOf(dir: string, manifest: ModelManifest): Promise<string> {
  const hash = createHash('sha256');
  for (const file of [MODEL_FILE, TOKENIZER_FILE, TOKENIZER_CONFIG_FILE, MANIFEST_FILE]) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    hash.update(`${file}\0`);
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  }
  return `onnx:${hash.digest('hex').slice(0, 16)}:${manifest.dim}:${manifest.pooling}:${manifest.normalize ? 'norm' : 'raw'}`;
}
