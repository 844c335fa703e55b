/**
 * Installs sentence-embedding models into `<data>/models/<name>`: from a directory (copied), a
 * local .tar.gz/.zip, or an http(s) URL of one (downloaded). Everything happens in a hidden staging
 * folder inside the models folder; the checksum, the manifest and a test load of the model are
 * checked there, and only then is the folder renamed into place, so a failed install never leaves
 * a half-written model where the daemon would look for one.
 */
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
import { basename, join } from 'node:path';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { extractArchive, sniffArchive } from '../shared/safe-archive.js';
import { type DownloadProgress, downloadFile, redactUrl } from './model-download.js';
import { MANIFEST_FILE, MODEL_FILE, type ModelManifest, readModelManifest } from './model-manifest.js';
import { OnnxEmbedder } from './onnx-embedder.js';

/** Written next to the model files: where it came from and the model's checksum. */
export const INSTALL_RECORD_FILE = 'install.json';
/** Default limit for a download, an archive's unpacked size and a copied directory. */
export const DEFAULT_MODEL_MAX_BYTES = 2 * 1024 ** 3;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface InstallModelOptions {
  /** A model directory, a .tar.gz/.tgz/.zip file, or an http(s) URL of such an archive. */
  source: string;
  /** `<data>/models`; created when missing. */
  modelsDir: string;
  /** Folder name; default the manifest's name, else the source's base name. */
  name?: string;
  /** Expected hex sha256 of the archive (file or download), or of model.onnx for a directory. */
  sha256?: string;
  maxBytes?: number;
  onProgress?: (progress: DownloadProgress) => void;
  /** Loads the staged model with ONNX Runtime and embeds a probe text before moving it (default true). */
  check?: boolean;
  signal?: AbortSignal;
}

export interface InstallRecord {
  name: string;
  /** A local path, or the URL without credentials and query. */
  source: string;
  model_sha256: string;
  archive_sha256?: string;
  /** Fingerprint of the vectors this model makes (from the test load). */
  fingerprint?: string;
  bytes: number;
  installed_at: string;
}

export interface InstalledModel {
  name: string;
  dir: string;
  manifest: ModelManifest;
  record: InstallRecord;
  /** A model of that name was there before and has been replaced. */
  replaced: boolean;
}

export interface ModelListing {
  name: string;
  dir: string;
  manifest?: ModelManifest;
  record?: InstallRecord;
  /** Why the folder is not a usable model (missing files, bad manifest). */
  problem?: string;
  bytes: number;
}

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

    const manifest = readModelManifest(root);
    const modelSha = await sha256File(join(root, MODEL_FILE));
    if (expected !== undefined && archiveSha === undefined && modelSha !== expected)
      throw checksum(join(source, MODEL_FILE), expected, modelSha);
    const name = options.name ?? manifest.name ?? nameFromSource(source);
    checkName(name);

    let fingerprint: string | undefined;
    if (options.check !== false) {
      const embedder = await OnnxEmbedder.create(root, { threads: 1, ...(options.signal ? { signal: options.signal } : {}) });
      try {
        await embedder.embed(['HomeAgent model check'], options.signal);
        fingerprint = embedder.fingerprint;
      } finally {
        await embedder.close();
      }
    }
    const record: InstallRecord = {
      name,
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
    return { name, dir: target, manifest, record, replaced };
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
    const listing: ModelListing = { name: entry.name, dir, bytes: treeBytes(dir) };
    try {
      listing.manifest = readModelManifest(dir);
    } catch (error) {
      listing.problem = error instanceof HomeAgentError ? error.message : describeError(error);
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

/** The folder holding embedder.json: the archive root or its single top-level folder. */
function manifestRoot(unpacked: string, source: string): string {
  if (existsSync(join(unpacked, MANIFEST_FILE))) return unpacked;
  const entries = readdirSync(unpacked, { withFileTypes: true });
  const only = entries.length === 1 ? entries[0] : undefined;
  if (only?.isDirectory() && existsSync(join(unpacked, only.name, MANIFEST_FILE))) return join(unpacked, only.name);
  throw new HomeAgentError(
    'HA_ERR_EMBED_MODEL_MISSING',
    `${source}: no ${MANIFEST_FILE} at the top of the archive or of its single top-level folder`,
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
