/**
 * Installs local models into `<data>/models/<name>`: sentence-embedding models (embedder.json,
 * see src/embed/model-manifest.ts) and dependency-parser models (parser.json,
 * docs/memory-parser.md), told apart by which manifest the folder holds, and pocketsphinx speech
 * models (offline voice commands), told by their acoustic model and dictionary (src/shared/
 * pocketsphinx-model.ts: the format CMU Sphinx and Debian ship, with no manifest). The source is a
 * directory (copied), a local .tar.gz/.zip, or an http(s) URL of one (downloaded). Everything
 * happens in a hidden staging folder inside the models folder; the checksum, the manifest and a
 * test load of the model are checked there, and only then is the folder renamed into place, so a
 * failed install never leaves a half-written model where the daemon would look for one.
 */

import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, relative } from 'node:path';
import { type DownloadProgress, downloadFile, redactUrl } from '../embed/model-download.js';
import { MANIFEST_FILE, MODEL_FILE, type ModelManifest, readModelManifest, TOKENIZER_FILE } from '../embed/model-manifest.js';
import { OnnxEmbedder } from '../embed/onnx-embedder.js';
import type { DependencyLabel } from '../nlp/dependency-parser.js';
import { OnnxDependencyParser } from '../nlp/onnx-dependency-parser.js';
import { PARSER_MANIFEST_FILE, type ParserManifest, readParserManifest } from '../nlp/parser-manifest.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { findProgram } from '../shared/find-on-path.js';
import { locatePocketsphinxModel, POCKETSPHINX_PROGRAM, type PocketsphinxModelFiles } from '../shared/pocketsphinx-model.js';
import { extractArchive, sniffArchive } from '../shared/safe-archive.js';

/** Written next to the model files: where it came from and the model's checksum. */
export const INSTALL_RECORD_FILE = 'install.json';
/** Default limit for a download, an archive's unpacked size and a copied directory. */
export const DEFAULT_MODEL_MAX_BYTES = 2 * 1024 ** 3;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * `embedder`: sentence vectors for memory (core.memory.embedder); `parser`: dependency parses
 * (core.agent.onnx_model_path); `speech`: the voice plugin's offline recogniser (plugin.voice.stt.local_model_dir).
 */
export type ModelKind = 'embedder' | 'parser' | 'speech';
type ManifestKind = Exclude<ModelKind, 'speech'>;

/** The manifest file that makes a folder an ONNX model of each kind; a folder holds exactly one of them. */
export const MODEL_KIND_FILES: Readonly<Record<ManifestKind, string>> = { embedder: MANIFEST_FILE, parser: PARSER_MANIFEST_FILE };
const KINDS = Object.keys(MODEL_KIND_FILES) as ManifestKind[];
const EXPECTED_FILES =
  `a sentence-embedding model (${MODEL_FILE}, ${TOKENIZER_FILE}, ${MANIFEST_FILE}), ` +
  `a dependency-parser model (${MODEL_FILE}, ${PARSER_MANIFEST_FILE}) ` +
  'or a pocketsphinx speech model (an acoustic model with mdef and feat.params, in the folder or one folder inside it, and a *.dict beside it)';
/** How long the test load of a speech model may take (loading the acoustic model takes about a second). */
const SPEECH_CHECK_TIMEOUT_MS = 60_000;

/**
 * What a parser.json says, reduced to sizes: the word and tag tables can hold many thousand
 * entries, and this is what `models list --json` prints.
 */
export interface ParserModelSummary {
  name?: string;
  /** Words with their own id (the unknown word not counted). */
  words: number;
  /** POS tags with their own id (the fallback entry 0 not counted). */
  tags: number;
  labels: readonly DependencyLabel[];
  max_words: number;
}

/** A speech model's parts, relative to its folder, and its dictionary's size. */
export interface SpeechModelSummary {
  /** Speech models carry no manifest, so no name of their own. */
  name?: undefined;
  /** The acoustic model folder ('.' when it is the model folder itself). */
  acoustic: string;
  dictionary: string;
  words: number;
}

/** A model's kind and its validated manifest (for a speech model: what its files are). */
export type ModelDescription =
  | { kind: 'embedder'; manifest: ModelManifest }
  | { kind: 'parser'; manifest: ParserModelSummary }
  | { kind: 'speech'; manifest: SpeechModelSummary };

export interface InstallModelOptions {
  /** A model directory, a .tar.gz/.tgz/.zip file, or an http(s) URL of such an archive. */
  source: string;
  /** `<data>/models`; created when missing. */
  modelsDir: string;
  /** Folder name; default the manifest's name, else the source's base name. */
  name?: string;
  /** Expected hex sha256 of the archive (file or download), or of model.onnx (a speech model: mdef) for a directory. */
  sha256?: string;
  maxBytes?: number;
  onProgress?: (progress: DownloadProgress) => void;
  /**
   * Loads the staged model before moving it (default true): an embedder embeds a probe text, a
   * parser runs its probe sentence, exactly as the daemon will load them (ONNX Runtime); a speech
   * model decodes a probe of faint noise with pocketsphinx_continuous, which must be installed.
   */
  check?: boolean;
  signal?: AbortSignal;
}

export interface InstallRecord {
  name: string;
  /** Absent in records written before parser models could be installed (those are embedders). */
  kind?: ModelKind;
  /** A local path, or the URL without credentials and query. */
  source: string;
  model_sha256: string;
  archive_sha256?: string;
  /** Fingerprint of the vectors an embedder makes (from the test load). */
  fingerprint?: string;
  bytes: number;
  installed_at: string;
}

export type InstalledModel = ModelDescription & {
  name: string;
  dir: string;
  record: InstallRecord;
  /** A model of that name was there before and has been replaced. */
  replaced: boolean;
};

interface ListingBase {
  name: string;
  dir: string;
  record?: InstallRecord;
  bytes: number;
}

interface UnusableListing {
  /** Set when exactly one manifest file says what the folder was meant to be. */
  kind?: ModelKind;
  manifest?: undefined;
  /** Why the folder is not a usable model: missing files, a bad manifest, both manifests or none. */
  problem: string;
}

/** A usable model with its manifest, or a folder that is not one. */
export type ModelListing = ListingBase & ((ModelDescription & { problem?: undefined }) | UnusableListing);

export async function installModel(options: InstallModelOptions): Promise<InstalledModel> {
  const { source, modelsDir } = options;
  const maxBytes = options.maxBytes ?? DEFAULT_MODEL_MAX_BYTES;
  const expected = options.sha256?.toLowerCase();
  if (expected !== undefined && !/^[0-9a-f]{64}$/.test(expected)) {
    throw new HomeAgentError('HA_ERR_EMBED_INSTALL', `--sha256 must be 64 hex digits, got ${JSON.stringify(options.sha256)}`);
  }
  if (options.name !== undefined) checkName(options.name);
  const remote = /^https?:\/\//i.test(source);
  const shownSource = remote ? redactUrl(source) : source;
  if (!remote && !existsSync(source))
    throw new HomeAgentError('HA_ERR_EMBED_INSTALL', `cannot install ${source}: no such file or directory`);

  mkdirSync(modelsDir, { recursive: true, mode: 0o750 });
  const staging = join(modelsDir, `.staging-${randomBytes(6).toString('hex')}`);
  mkdirSync(staging, { mode: 0o750 });
  try {
    let root: string;
    let archiveSha: string | undefined;
    if (!remote && statSync(source).isDirectory()) {
      // Before copying: a folder that is no model at all should not cost a copy of its contents.
      modelKind(source);
      root = join(staging, 'model');
      copyTree(source, root, maxBytes);
    } else {
      let archive = source;
      if (remote) {
        archive = join(staging, 'download');
        const got = await downloadFile(source, archive, {
          maxBytes,
          ...(options.onProgress ? { onProgress: options.onProgress } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        });
        archiveSha = got.sha256;
      } else {
        if (statSync(source).size > maxBytes) throw failed(shownSource, `it is larger than the limit of ${maxBytes} bytes`);
        archiveSha = await sha256File(source);
      }
      if (expected !== undefined && archiveSha !== expected) throw checksum(shownSource, expected, archiveSha);
      const format = sniffArchive(archive);
      if (!format) throw failed(shownSource, 'it is neither a directory nor a .tar.gz or .zip archive');
      const unpacked = join(staging, 'unpacked');
      mkdirSync(unpacked);
      await extractArchive(archive, format, unpacked, {
        maxBytes,
        // A model has a handful of files; anything far beyond that is not a model archive.
        maxEntries: 1000,
        keepExecutable: false,
        fail: (why, cause) =>
          new HomeAgentError('HA_ERR_EMBED_INSTALL', `cannot unpack ${shownSource}: ${why}`, cause === undefined ? {} : { cause }),
      });
      root = manifestRoot(unpacked, shownSource);
      // Nothing is wrong with the archive, but `unpacked` is where the files are; drop the copy.
      if (remote) rmSync(archive, { force: true });
    }

    const description = await namingSource(root, shownSource, () => describeModel(root, shownSource));
    const { kind, manifest } = description;
    const modelFile = checksumFile(description);
    const modelSha = await sha256File(join(root, modelFile));
    if (expected !== undefined && archiveSha === undefined && modelSha !== expected)
      throw checksum(join(source, modelFile), expected, modelSha);
    const name = options.name ?? manifest.name ?? nameFromSource(source);
    checkName(name);

    let fingerprint: string | undefined;
    if (options.check !== false) {
      if (kind === 'embedder') fingerprint = await namingSource(root, shownSource, () => checkEmbedder(root, options.signal));
      else if (kind === 'parser') await namingSource(root, shownSource, () => checkParser(root, options.signal));
      else await namingSource(root, shownSource, () => checkSpeech(root, staging, options.signal));
    }
    const record: InstallRecord = {
      name,
      kind,
      source: shownSource,
      model_sha256: modelSha,
      ...(archiveSha === undefined ? {} : { archive_sha256: archiveSha }),
      ...(fingerprint === undefined ? {} : { fingerprint }),
      bytes: treeBytes(root),
      installed_at: new Date().toISOString(),
    };
    writeFileSync(join(root, INSTALL_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);

    const target = join(modelsDir, name);
    const replaced = existsSync(target);
    let previous: string | undefined;
    if (replaced) {
      previous = join(modelsDir, `.old-${name}-${randomBytes(4).toString('hex')}`);
      renameSync(target, previous);
    }
    renameSync(root, target);
    if (previous) rmSync(previous, { recursive: true, force: true });
    return { ...description, name, dir: target, record, replaced };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Installed models (folders of `modelsDir`, hidden ones skipped), usable or not, by name. */
export function listModels(modelsDir: string): ModelListing[] {
  if (!existsSync(modelsDir)) return [];
  const out: ModelListing[] = [];
  for (const entry of readdirSync(modelsDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dir = join(modelsDir, entry.name);
    let listing: ModelListing;
    try {
      listing = { name: entry.name, dir, bytes: treeBytes(dir), ...describeModel(dir) };
    } catch (error) {
      const problem = error instanceof HomeAgentError ? error.message : describeError(error);
      const kinds = kindsIn(dir);
      listing = { name: entry.name, dir, bytes: treeBytes(dir), problem, ...(kinds.length === 1 ? { kind: kinds[0] as ModelKind } : {}) };
    }
    try {
      listing.record = JSON.parse(readFileSync(join(dir, INSTALL_RECORD_FILE), 'utf8')) as InstallRecord;
    } catch {
      // Copied in by hand: no record, still listed.
    }
    out.push(listing);
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Which kind of model a folder holds, told by its manifest file, or for a speech model by its
 * acoustic model and dictionary. None or several is an error naming the files each kind needs:
 * guessing from other files would install a model the daemon then reads the wrong way.
 */
export function modelKind(dir: string, shown = dir): ModelKind {
  const found = kindsIn(dir);
  if (found.length === 1) return found[0] as ModelKind;
  if (found.length === 0) {
    const speech = locatePocketsphinxModel(dir);
    // Half a speech model: name the half that is missing rather than every kind's files.
    if (speech.hmm || speech.dict)
      throw new HomeAgentError(
        'HA_ERR_EMBED_MODEL_MISSING',
        `${shown} looks like a pocketsphinx speech model but has no ${speech.hmm ? 'pronunciation dictionary (*.dict)' : 'acoustic model (mdef, feat.params)'}`,
      );
    throw new HomeAgentError(
      'HA_ERR_EMBED_MODEL_MISSING',
      `${shown} holds neither ${MANIFEST_FILE} nor ${PARSER_MANIFEST_FILE} nor a speech model; a model directory is ${EXPECTED_FILES}`,
    );
  }
  throw new HomeAgentError(
    'HA_ERR_EMBED_MANIFEST',
    `${shown} holds the files of ${found.join(' and ')} models; a model directory is one model: ${EXPECTED_FILES}`,
  );
}

/** The kinds whose files the folder holds: a manifest each, or a whole speech model. */
function kindsIn(dir: string): ModelKind[] {
  const speech = locatePocketsphinxModel(dir);
  return [...KINDS.filter((k) => existsSync(join(dir, MODEL_KIND_FILES[k]))), ...(speech.hmm && speech.dict ? (['speech'] as const) : [])];
}

/** Reads and validates the folder's manifest with the validator of its kind; `shown` names the folder in kind errors. */
export function describeModel(dir: string, shown = dir): ModelDescription {
  const kind = modelKind(dir, shown);
  if (kind === 'embedder') return { kind, manifest: readModelManifest(dir) };
  if (kind === 'parser') return { kind, manifest: summarizeParser(readParserManifest(dir)) };
  const files = locatePocketsphinxModel(dir) as PocketsphinxModelFiles;
  return {
    kind,
    manifest: {
      acoustic: relative(dir, files.hmm) || '.',
      dictionary: relative(dir, files.dict),
      words: readFileSync(files.dict, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '').length,
    },
  };
}

/** The file whose sha256 the install record keeps (and --sha256 checks for a directory). */
function checksumFile(description: ModelDescription): string {
  return description.kind === 'speech' ? join(description.manifest.acoustic, 'mdef') : MODEL_FILE;
}

function summarizeParser(manifest: ParserManifest): ParserModelSummary {
  return {
    ...(manifest.name === undefined ? {} : { name: manifest.name }),
    words: manifest.wordIds.size,
    tags: manifest.tagIds.size,
    labels: manifest.labels,
    max_words: manifest.maxWords,
  };
}

/** Errors about the staged copy name the source instead: the staging folder is gone by the time anyone reads them. */
async function namingSource<T>(root: string, shown: string, run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof HomeAgentError && error.message.includes(root))
      throw new HomeAgentError(error.code, error.message.replaceAll(root, shown), { cause: error });
    throw error;
  }
}

/** Loads the model in its worker and embeds a probe text; resolves with the vectors' fingerprint. */
async function checkEmbedder(dir: string, signal: AbortSignal | undefined): Promise<string> {
  const embedder = await OnnxEmbedder.create(dir, { threads: 1, ...(signal ? { signal } : {}) });
  try {
    await embedder.embed(['HomeAgent model check'], signal);
    return embedder.fingerprint;
  } finally {
    await embedder.close();
  }
}

const SILENT = { debug() {}, info() {}, warn() {} };

/**
 * Loads the parser the way the daemon does (worker thread, interface check, probe sentence with
 * the largest ids). load() rejects with the load error where parse() would quietly fall back to
 * rules, so a model the daemon could not use is refused here.
 */
async function checkParser(dir: string, signal: AbortSignal | undefined): Promise<void> {
  const cancelled = () => new HomeAgentError('HA_ERR_ABORTED', 'the model check was cancelled', { cause: signal?.reason });
  if (signal?.aborted) throw cancelled();
  const parser = new OnnxDependencyParser({ dir, log: SILENT, threads: 1 });
  const onAbort = () => void parser.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await parser.load();
  } catch (error) {
    if (signal?.aborted) throw cancelled();
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await parser.close();
  }
}

/**
 * Decodes a second of faint noise with the model and a one-word grammar, as the voice plugin's
 * decoder runs it: a model pocketsphinx cannot load (a truncated means file, a dictionary in the
 * wrong format) exits non-zero here rather than when the microphone first hears someone.
 */
async function checkSpeech(dir: string, staging: string, signal: AbortSignal | undefined): Promise<void> {
  const program = findProgram(POCKETSPHINX_PROGRAM);
  if (!program)
    throw new HomeAgentError(
      'HA_ERR_EMBED_INSTALL',
      `cannot test-load the speech model: ${POCKETSPHINX_PROGRAM} is not installed (apt-get install pocketsphinx), or use --no-check`,
    );
  const files = locatePocketsphinxModel(dir) as PocketsphinxModelFiles;
  const word = readFileSync(files.dict, 'utf8')
    .split('\n')
    .map((line) => line.split(/\s+/)[0] ?? '')
    .find((entry) => /^[^(<\s]+$/u.test(entry));
  if (!word) throw new HomeAgentError('HA_ERR_EMBED_MANIFEST', `${files.dict} holds no word with a pronunciation`);
  const probe = join(staging, 'probe.raw');
  const noise = Buffer.alloc(16000 * 2);
  for (let index = 0; index < 16000; index++) noise.writeInt16LE(((index * 7919) % 9) - 4, index * 2);
  writeFileSync(probe, noise);
  const grammar = join(staging, 'probe.jsgf');
  writeFileSync(grammar, `#JSGF V1.0;\ngrammar probe;\npublic <probe> = ${word};\n`);
  await new Promise<void>((resolve, reject) => {
    execFile(
      program,
      ['-infile', probe, '-hmm', files.hmm, '-dict', files.dict, '-jsgf', grammar, '-samprate', '16000'],
      { timeout: SPEECH_CHECK_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, ...(signal ? { signal } : {}) },
      (error, _stdout, stderr) => {
        if (!error) return resolve();
        if (signal?.aborted) return reject(new HomeAgentError('HA_ERR_ABORTED', 'the model check was cancelled', { cause: signal.reason }));
        const last =
          String(stderr)
            .trim()
            .split('\n')
            .filter((line) => /ERROR|FATAL/.test(line))
            .at(-1) ?? describeError(error);
        reject(new HomeAgentError('HA_ERR_EMBED_MANIFEST', `pocketsphinx cannot load the speech model in ${dir}: ${last.slice(0, 300)}`));
      },
    );
  });
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function checkName(name: string): void {
  if (!NAME.test(name)) {
    throw new HomeAgentError(
      'HA_ERR_EMBED_INSTALL',
      `model name ${JSON.stringify(name)} is not allowed: letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100 characters (use --name)`,
    );
  }
}

function nameFromSource(source: string): string {
  const path = /^https?:\/\//i.test(source) ? new URL(source).pathname : source;
  return basename(path.replace(/\/+$/, '')).replace(/\.(tar\.gz|tgz|zip)$/i, '');
}

function failed(source: string, why: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_EMBED_INSTALL', `cannot install ${source}: ${why}`);
}

function checksum(what: string, expected: string, actual: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_EMBED_CHECKSUM', `sha256 of ${what} is ${actual}, expected ${expected}; nothing was installed`);
}

/** The folder holding a model: the archive root or its single top-level folder. */
function manifestRoot(unpacked: string, source: string): string {
  const hasManifest = (dir: string) => kindsIn(dir).length > 0;
  if (hasManifest(unpacked)) return unpacked;
  const entries = readdirSync(unpacked, { withFileTypes: true });
  const only = entries.length === 1 ? entries[0] : undefined;
  if (only?.isDirectory() && hasManifest(join(unpacked, only.name))) return join(unpacked, only.name);
  throw new HomeAgentError(
    'HA_ERR_EMBED_MODEL_MISSING',
    `${source}: no model (${MANIFEST_FILE}, ${PARSER_MANIFEST_FILE} or a speech model) at the top of the archive or of its single top-level folder; ` +
      `a model is ${EXPECTED_FILES}`,
  );
}

/** Copies regular files and folders (symlinks followed), refusing anything else and oversize trees. */
function copyTree(from: string, to: string, maxBytes: number): void {
  let total = 0;
  const walk = (src: string, dst: string) => {
    mkdirSync(dst, { mode: 0o755 });
    for (const name of readdirSync(src)) {
      const s = join(src, name);
      const d = join(dst, name);
      const stat = statSync(s);
      if (stat.isDirectory()) walk(s, d);
      else if (stat.isFile()) {
        total += stat.size;
        if (total > maxBytes) throw failed(from, `the directory holds more than the limit of ${maxBytes} bytes`);
        copyFileSync(s, d);
      } else throw failed(from, `${s} is neither a file nor a folder`);
    }
  };
  walk(from, to);
}

function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += treeBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}
