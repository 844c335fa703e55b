/**
 * A dependency-parser model directory (docs/memory-parser.md): `model.onnx` and `parser.json`,
 * which says how words and POS tags become the model's ids and what its label outputs mean.
 * Example: `{"format":"homeagent-dep-parser-v1","words":["<unk>","我","住",…],
 * "tags":["<unk>","n","v",…],"labels":["HED","SBV","VOB",…],"max_words":128}`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MODEL_FILE } from '../embed/model-manifest.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { type DependencyLabel, isDependencyLabel } from './dependency-parser.js';

export const PARSER_MANIFEST_FILE = 'parser.json';
export const PARSER_FORMAT = 'homeagent-dep-parser-v1';
/** Parsing cost grows with n³ (tree decoding); no treebank sentence comes near this. */
export const MAX_PARSER_WORDS = 1024;

export interface ParserManifest {
  format: typeof PARSER_FORMAT;
  name?: string;
  /** Word → id fed as `word_ids`; id 0 is for words not listed. */
  wordIds: ReadonlyMap<string, number>;
  /** Tag → id fed as `tag_ids` (its index in `tags`); id 0 is for tags not listed. */
  tagIds: ReadonlyMap<string, number>;
  /** What each position of the last axis of `label_scores` means. */
  labels: readonly DependencyLabel[];
  /** Longer sentences go to the rule parser. */
  maxWords: number;
}

const TOP_KEYS = new Set(['format', 'name', 'description', 'license', 'source', 'words', 'tags', 'labels', 'max_words']);

/** Checks the directory and reads `<dir>/parser.json`; every message names the file and the field. */
export function readParserManifest(dir: string): ParserManifest {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new HomeAgentError('HA_ERR_EMBED_MODEL_MISSING', `parser model directory ${dir} does not exist`);
  for (const file of [MODEL_FILE, PARSER_MANIFEST_FILE]) {
    if (!existsSync(join(dir, file))) {
      throw new HomeAgentError(
        'HA_ERR_EMBED_MODEL_MISSING',
        `parser model directory ${dir} has no ${file} (it needs ${MODEL_FILE} and ${PARSER_MANIFEST_FILE})`,
      );
    }
  }
  const file = join(dir, PARSER_MANIFEST_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new HomeAgentError('HA_ERR_EMBED_MANIFEST', `${file}: not valid JSON: ${describeError(error)}`, { cause: error });
  }
  return validateParserManifest(raw, file);
}

export function validateParserManifest(raw: unknown, file: string): ParserManifest {
  const bad = (field: string, why: string) => new HomeAgentError('HA_ERR_EMBED_MANIFEST', `${file}: ${field} ${why}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('the manifest', 'must be a JSON object');
  const m = raw as Record<string, unknown>;
  for (const key of Object.keys(m)) if (!TOP_KEYS.has(key)) throw bad(key, `is not a manifest field (known: ${[...TOP_KEYS].join(', ')})`);
  if (m.format !== PARSER_FORMAT) throw bad('format', `must be "${PARSER_FORMAT}", got ${JSON.stringify(m.format)}`);
  for (const field of ['name', 'description', 'license', 'source']) {
    if (m[field] !== undefined && (typeof m[field] !== 'string' || m[field] === '')) throw bad(field, 'must be a non-empty string');
  }
  const maxWords = m.max_words;
  if (typeof maxWords !== 'number' || !Number.isInteger(maxWords) || maxWords < 1 || maxWords > MAX_PARSER_WORDS)
    throw bad('max_words', `must be an integer from 1 to ${MAX_PARSER_WORDS}, got ${JSON.stringify(maxWords)}`);

  const labels = stringList(m.labels, 'labels', bad);
  for (const [i, label] of labels.entries()) {
    if (!isDependencyLabel(label)) throw bad(`labels[${i}]`, `${JSON.stringify(label)} is not a dependency label (HED, SBV, VOB, …)`);
  }
  // The root is always HED; every other word needs some other label to take.
  if (!labels.some((l) => l !== 'HED')) throw bad('labels', 'must name at least one label besides HED');

  const manifest: ParserManifest = {
    format: PARSER_FORMAT,
    wordIds: idMap(m.words, 'words', bad),
    tagIds: listIds(stringList(m.tags, 'tags', bad)),
    labels: labels as DependencyLabel[],
    maxWords,
  };
  if (typeof m.name === 'string') manifest.name = m.name;
  return manifest;
}

type Bad = (field: string, why: string) => HomeAgentError;

function stringList(value: unknown, field: string, bad: Bad): string[] {
  if (!Array.isArray(value) || value.length === 0) throw bad(field, 'must be a non-empty list of strings');
  for (const [i, item] of value.entries()) if (typeof item !== 'string') throw bad(`${field}[${i}]`, 'must be a string');
  return value as string[];
}

/** A list's index is the id; the first of two equal entries wins (what the model saw in training). */
function listIds(list: readonly string[]): Map<string, number> {
  const ids = new Map<string, number>();
  list.forEach((item, i) => {
    if (i > 0 && !ids.has(item)) ids.set(item, i);
  });
  return ids;
}

/** `words` is a list (index = id, entry 0 the unknown word) or an object of word → id. */
function idMap(value: unknown, field: string, bad: Bad): Map<string, number> {
  if (Array.isArray(value)) return listIds(stringList(value, field, bad));
  if (typeof value !== 'object' || value === null) throw bad(field, 'must be a list of words or an object of word → id');
  const ids = new Map<string, number>();
  for (const [word, id] of Object.entries(value)) {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0)
      throw bad(`${field}.${word}`, `must be an id (integer ≥ 0), got ${JSON.stringify(id)}`);
    ids.set(word, id);
  }
  if (ids.size === 0) throw bad(field, 'must not be empty');
  return ids;
}

/** The ids fed to the model for one sentence; words and tags not listed get 0. */
export function encodeWords(
  manifest: ParserManifest,
  words: readonly string[],
  tags: readonly string[],
): { wordIds: number[]; tagIds: number[] } {
  return {
    wordIds: words.map((w) => manifest.wordIds.get(w) ?? manifest.wordIds.get(w.toLowerCase()) ?? 0),
    tagIds: tags.map((t) => manifest.tagIds.get(t) ?? 0),
  };
}

/** The largest ids the model can be fed: the load-time probe sends them to catch a table too small. */
export function largestIds(manifest: ParserManifest): { word: number; tag: number } {
  // A loop, not Math.max(...ids): a real vocabulary has more entries than a call has arguments.
  const largest = (ids: Iterable<number>): number => {
    let max = 0;
    for (const id of ids) if (id > max) max = id;
    return max;
  };
  return { word: largest(manifest.wordIds.values()), tag: largest(manifest.tagIds.values()) };
}
