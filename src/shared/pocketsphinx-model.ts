/**
 * Where a pocketsphinx-format speech model keeps its parts. Shared by the voice plugin's local
 * recogniser (through the SDK), which loads one, and `homeagentctl models install`, which tells a
 * speech model from the ONNX kinds by these parts (it has no manifest of HomeAgent's own: it is
 * the format CMU Sphinx and Debian ship).
 */
import { accessSync, constants, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Debian's decoder program (package pocketsphinx), which reads a model of this format. */
export const POCKETSPHINX_PROGRAM = 'pocketsphinx_continuous';
/** The dictionary picked first when a folder holds several (Debian's US English one). */
export const POCKETSPHINX_DICTIONARY_FILE = 'cmudict-en-us.dict';
/** The files that make a folder an acoustic model. */
export const POCKETSPHINX_ACOUSTIC_FILES = ['mdef', 'feat.params'] as const;

export interface PocketsphinxModelFiles {
  /** The acoustic model directory (mdef, feat.params, means, ...). */
  hmm: string;
  /** The pronunciation dictionary. */
  dict: string;
}

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

const hasAcousticModel = (dir: string): boolean => POCKETSPHINX_ACOUSTIC_FILES.every((file) => readable(join(dir, file)));

/**
 * The parts of a pocketsphinx-format model directory: the acoustic model is the directory itself or
 * one directly inside it (Debian's en-us/), the dictionary the .dict file beside it
 * (cmudict-en-us.dict first), if it can be read. Undefined for what is not found.
 */
export function locatePocketsphinxModel(modelDir: string): Partial<PocketsphinxModelFiles> {
  let entries: string[] = [];
  try {
    entries = readdirSync(modelDir).sort();
  } catch {
    return {};
  }
  const hmm = hasAcousticModel(modelDir) ? modelDir : entries.map((name) => join(modelDir, name)).find((path) => hasAcousticModel(path));
  const dicts = entries.filter((name) => name.endsWith('.dict'));
  const dict = dicts.includes(POCKETSPHINX_DICTIONARY_FILE) ? POCKETSPHINX_DICTIONARY_FILE : dicts[0];
  const dictPath = dict === undefined ? undefined : join(modelDir, dict);
  return { ...(hmm ? { hmm } : {}), ...(dictPath && readable(dictPath) ? { dict: dictPath } : {}) };
}
