/**
 * Where the Silero VAD v5 model is and whether it is the one we tested. The build copies it next to
 * the compiled detector (scripts/copy-vad-model.mjs); running from source it is read from the
 * @ricky0123/vad-web package that ships it. Either way the file is checked against the digest we
 * pinned, so a swapped or damaged model fails loudly instead of detecting speech badly.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HomeAgentError } from '../../../src/sdk/index.js';

export const VAD_MODEL_FILE = 'silero_vad_v5.onnx';
export const VAD_MODEL_SHA256 = '2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f';

/** The model next to this module (dist), else in node_modules; undefined when neither exists. */
export function findVadModel(): string | undefined {
  const beside = join(dirname(fileURLToPath(import.meta.url)), VAD_MODEL_FILE);
  if (existsSync(beside)) return beside;
  try {
    const packaged = join(dirname(createRequire(import.meta.url).resolve('@ricky0123/vad-web')), VAD_MODEL_FILE);
    if (existsSync(packaged)) return packaged;
  } catch {
    // The package is a development dependency; an installed daemon has the copy in dist instead.
  }
  return undefined;
}

/** The model's bytes, verified against {@link VAD_MODEL_SHA256}. */
export function loadVadModel(path: string | undefined = findVadModel()): Uint8Array {
  if (path === undefined) {
    throw new HomeAgentError(
      'HA_ERR_VOICE_VAD',
      `the Silero VAD model ${VAD_MODEL_FILE} is neither next to the voice plugin nor in node_modules/@ricky0123/vad-web/dist (run npm run build)`,
    );
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new HomeAgentError('HA_ERR_VOICE_VAD', `the Silero VAD model ${path} cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== VAD_MODEL_SHA256) {
    throw new HomeAgentError(
      'HA_ERR_VOICE_VAD',
      `the Silero VAD model ${path} is not the expected file: sha256 ${actual}, expected ${VAD_MODEL_SHA256}`,
    );
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
