/**
 * A sentence-embedding model directory and its manifest. The directory holds
 *  - `model.onnx`: the exported model (e.g. a sentence-transformers model exported with optimum);
 *  - `tokenizer.json`: the Hugging Face tokenizer (`tokenizer_config.json` is read when present);
 *  - `embedder.json`: how to feed and read the model, see {@link ModelManifest}.
 * Example manifest for all-MiniLM-L6-v2:
 * `{"dim":384,"pooling":"mean","normalize":true,"max_tokens":256,
 *   "inputs":{"input_ids":"input_ids","attention_mask":"attention_mask","token_type_ids":"token_type_ids"},
 *   "output":"last_hidden_state"}`
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describeError, HomeAgentError } from '../shared/errors.js';

export const MODEL_FILE = 'model.onnx';
export const TOKENIZER_FILE = 'tokenizer.json';
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';
export const MANIFEST_FILE = 'embedder.json';

/**
 * How the token vectors become one sentence vector: `mean` over the attention mask
 * (sentence-transformers' default), `cls` the first token, `none` when the model output is already
 * one vector per text (`[batch, dim]`, e.g. a `sentence_embedding` output).
 */
export type Pooling = 'mean' | 'cls' | 'none';

export interface ModelManifest {
  /** Optional display name; `models install` uses it when no --name is given. */
  name?: string;
  description?: string;
  /** Length of the sentence vector (the model's hidden size). */
  dim: number;
  pooling: Pooling;
  /**
   * Whether the model was trained for cosine similarity (its sentence-transformers pipeline ends in
   * `Normalize`). HomeAgent compares by cosine and returns unit vectors either way (the Embedder
   * contract); the flag is kept in the fingerprint so that the two readings never mix.
   */
  normalize: boolean;
  /** Longer texts are cut to this many tokens, special tokens included (the model's limit). */
  max_tokens: number;
  /** Graph input names by role. Every graph input must have a role. */
  inputs: {
    input_ids: string;
    attention_mask?: string;
    token_type_ids?: string;
  };
  /** Graph output to read; default the model's first output. */
  output?: string;
  /** Token id used to pad a batch; default the tokenizer's [PAD]/<pad>, else 0. */
  pad_token_id?: number;
}

const TOP_KEYS = new Set([
  'name',
  'description',
  'license',
  'source',
  'dim',
  'pooling',
  'normalize',
  'max_tokens',
  'inputs',
  'output',
  'pad_token_id',
]);
const INPUT_ROLES = new Set(['input_ids', 'attention_mask', 'token_type_ids']);
const MAX_DIM = 8192;
const MAX_TOKENS = 8192;

/** Reads and validates `<dir>/embedder.json` and checks the model and tokenizer files exist. */
export function readModelManifest(dir: string): ModelManifest {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new HomeAgentError('HA_ERR_EMBED_MODEL_MISSING', `model directory ${dir} does not exist`);
  for (const file of [MANIFEST_FILE, MODEL_FILE, TOKENIZER_FILE]) {
    if (!existsSync(join(dir, file))) {
      throw new HomeAgentError(
        'HA_ERR_EMBED_MODEL_MISSING',
        `model directory ${dir} has no ${file} (it needs ${MODEL_FILE}, ${TOKENIZER_FILE} and ${MANIFEST_FILE})`,
      );
    }
  }
  const file = join(dir, MANIFEST_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new HomeAgentError('HA_ERR_EMBED_MANIFEST', `${file}: not valid JSON: ${describeError(error)}`, { cause: error });
  }
  return validateManifest(raw, file);
}

/** Checks a parsed manifest; messages name the file and the field. */
export function validateManifest(raw: unknown, file: string): ModelManifest {
  const bad = (field: string, why: string) => new HomeAgentError('HA_ERR_EMBED_MANIFEST', `${file}: ${field} ${why}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('the manifest', 'must be a JSON object');
  const m = raw as Record<string, unknown>;
  for (const key of Object.keys(m)) if (!TOP_KEYS.has(key)) throw bad(key, `is not a manifest field (known: ${[...TOP_KEYS].join(', ')})`);
  const int = (field: string, max: number): number => {
    const v = m[field];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max)
      throw bad(field, `must be an integer from 1 to ${max}, got ${JSON.stringify(v)}`);
    return v;
  };
  const optionalString = (field: string): string | undefined => {
    const v = m[field];
    if (v !== undefined && (typeof v !== 'string' || v === '')) throw bad(field, 'must be a non-empty string');
    return v as string | undefined;
  };
  const dim = int('dim', MAX_DIM);
  const max_tokens = int('max_tokens', MAX_TOKENS);
  const pooling = m.pooling;
  if (pooling !== 'mean' && pooling !== 'cls' && pooling !== 'none')
    throw bad('pooling', `must be "mean", "cls" or "none", got ${JSON.stringify(pooling)}`);
  if (typeof m.normalize !== 'boolean') throw bad('normalize', `must be true or false, got ${JSON.stringify(m.normalize)}`);
  const inputs = m.inputs;
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs))
    throw bad('inputs', 'must be an object of graph input names by role');
  for (const [role, name] of Object.entries(inputs)) {
    if (!INPUT_ROLES.has(role)) throw bad(`inputs.${role}`, 'is not a role (input_ids, attention_mask, token_type_ids)');
    if (typeof name !== 'string' || name === '') throw bad(`inputs.${role}`, 'must be a graph input name');
  }
  const roles = inputs as Record<string, string>;
  if (roles.input_ids === undefined) throw bad('inputs.input_ids', 'is required');
  const pad = m.pad_token_id;
  if (pad !== undefined && (typeof pad !== 'number' || !Number.isInteger(pad) || pad < 0))
    throw bad('pad_token_id', 'must be a token id (integer ≥ 0)');

  const manifest: ModelManifest = {
    dim,
    pooling,
    normalize: m.normalize,
    max_tokens,
    inputs: {
      input_ids: roles.input_ids,
      ...(roles.attention_mask === undefined ? {} : { attention_mask: roles.attention_mask }),
      ...(roles.token_type_ids === undefined ? {} : { token_type_ids: roles.token_type_ids }),
    },
  };
  const name = optionalString('name');
  const description = optionalString('description');
  const output = optionalString('output');
  optionalString('license');
  optionalString('source');
  if (name !== undefined) manifest.name = name;
  if (description !== undefined) manifest.description = description;
  if (output !== undefined) manifest.output = output;
  if (pad !== undefined) manifest.pad_token_id = pad as number;
  return manifest;
}
