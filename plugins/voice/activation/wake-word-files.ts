/**
 * What an openWakeWord model directory must hold, checked without loading ONNX Runtime: the
 * detector checks it on the main thread before it starts a worker, so a wrong path is reported at
 * once and by name, and the worker checks it again before it loads the models.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HomeAgentError } from '../../../src/sdk/index.js';

export const WAKE_WORD_SAMPLE_RATE = 16_000;
export const MEL_FILE = 'melspectrogram.onnx';
export const EMBEDDING_FILE = 'embedding_model.onnx';

export interface WakeWordFiles {
  mel: string;
  embedding: string;
  /** Classifier paths, sorted by name. */
  classifiers: string[];
}

export function wakeWordError(file: string, problem: string, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_VOICE_WAKE_WORD', `${file}: ${problem}`, cause === undefined ? {} : { cause });
}

/** The model files of `dir`; HA_ERR_VOICE_WAKE_WORD naming the directory or the missing file. */
export function wakeWordFiles(dir: string): WakeWordFiles {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw wakeWordError(dir, 'no such directory (plugin.voice.activation.wake_word_model_dir)');
  }
  const mel = join(dir, MEL_FILE);
  const embedding = join(dir, EMBEDDING_FILE);
  for (const file of [mel, embedding]) {
    if (!existsSync(file)) throw wakeWordError(file, 'missing (the wake word model directory needs it)');
  }
  const classifiers = readdirSync(dir)
    .filter((f) => f.endsWith('.onnx') && f !== MEL_FILE && f !== EMBEDDING_FILE)
    .sort()
    .map((f) => join(dir, f));
  if (classifiers.length === 0) throw wakeWordError(dir, `no classifier *.onnx besides ${MEL_FILE} and ${EMBEDDING_FILE}`);
  return { mel, embedding, classifiers };
}
