/**
 * Unpacks a plugin archive (.tgz/.tar.gz or .zip) into the installed-plugins folder. Every entry
 * is checked before anything is written: only regular files and folders, no absolute paths, no
 * `..`, no links or devices, at most 10 000 entries and the configured number of bytes unpacked.
 * The archive is unpacked into a hidden staging folder first; its manifest is validated (and the
 * caller's checks run) there, and only then is it renamed into place, so a bad archive never
 * touches an installed plugin.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Entry as ZipEntry, ZipFile } from 'yauzl';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Manifest } from './manifest.js';

export const MAX_ARCHIVE_ENTRIES = 10_000;

export interface InstallOptions {
  file: string;
  installDir: string;
  maxBytes: number;
  /** Names that may not be installed (the shipped plugins'). */
  refuseNames: ReadonlySet<string>;
  /** Reads the manifest of an unpacked plugin folder (plugin.json, or SKILL.md for a skill). */
  readManifest: (dir: string) => Manifest;
  /** Further checks on the manifest before the plugin is moved into place (engine range, ...). */
  staging?: (manifest: Manifest) => Promise<void>;
}

export interface InstalledArchive {
  manifest: Manifest;
  /** Where the plugin now lives (`<installDir>/<name>`). */
  dir: string;
  /** Removes the previous version's files kept during the swap. */
  cleanup(): void;
}

interface EntryInfo {
  path: string;
  type: 'file' | 'directory';
  size: number;
}

export async function installArchive(options: InstallOptions): Promise<InstalledArchive> {
  const { file, installDir, maxBytes } = options;
  let size: number;
  try {
    size = statSync(file).size;
  } catch (error) {
    throw fail(file, `cannot read it: ${describeError(error)}`);
  }
  if (size > maxBytes) throw fail(file, `it is ${size} bytes; the limit is ${maxBytes} (core.plugins.install_max_bytes)`);
  const format = sniffFormat(file);
  mkdirSync(installDir, { recursive: true, mode: 0o750 });
  const staging = join(installDir, `.staging-${randomBytes(6).toString('hex')}`);
  mkdirSync(staging, { mode: 0o750 });
  try {
    if (format === 'zip') await unzip(file, staging, maxBytes);
    else await untar(file, staging, maxBytes);
    const root = pluginRoot(staging, file);
    let manifest: Manifest;
    try {
      manifest = options.readManifest(root);
    } catch (error) {
      // Name the archive, not the hidden staging folder it was unpacked into.
      if (error instanceof HomeAgentError)
        throw new HomeAgentError(error.code, error.message.split(root).join(`${file}:`), { cause: error });
      throw error;
    }
    if (manifest.kind === 'builtin') throw fail(file, 'installed plugins cannot be of kind builtin (use process, lua or skill)');
    if (options.refuseNames.has(manifest.name)) throw fail(file, `${manifest.name} is the name of a plugin shipped with HomeAgent`);
    await options.staging?.(manifest);

    const target = join(installDir, manifest.name);
    let previous: string | undefined;
    if (existsSync(target)) {
      previous = join(installDir, `.old-${manifest.name}-${randomBytes(4).toString('hex')}`);
      renameSync(target, previous);
    }
    renameSync(root, target);
    rmSync(staging, { recursive: true, force: true });
    return {
      manifest,
      dir: target,
      cleanup: () => {
        if (previous) rmSync(previous, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (error instanceof HomeAgentError) throw error;
    throw fail(file, describeError(error), error);
  }
}

/** Removes an installed plugin's folder; refuses anything outside `installDir`. */
export function removeInstalled(installDir: string, dir: string): void {
  const rel = relative(installDir, dir);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.includes(sep)) {
    throw new HomeAgentError('HA_ERR_PLUGIN_STATE', `${dir} is not an installed plugin folder`);
  }
  rmSync(dir, { recursive: true, force: true });
}

function fail(file: string, why: string, cause?: unknown): HomeAgentError {
  return new HomeAgentError('HA_ERR_PLUGIN_INSTALL', `cannot install ${file}: ${why}`, cause === undefined ? {} : { cause });
}

function sniffFormat(file: string): 'zip' | 'tgz' {
  const head = Buffer.alloc(4);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) return 'zip';
  if (head[0] === 0x1f && head[1] === 0x8b) return 'tgz';
  throw fail(file, 'it is neither a gzip-compressed tar (.tgz) nor a zip archive');
}

/** The folder holding the manifest: the archive root, or its single top-level folder (`package/`). */
function pluginRoot(staging: string, file: string): string {
  const has = (dir: string) => existsSync(join(dir, 'plugin.json')) || existsSync(join(dir, 'SKILL.md'));
  if (has(staging)) return staging;
  const entries = readdirSync(staging, { withFileTypes: true });
  const only = entries.length === 1 ? entries[0] : undefined;
  if (only?.isDirectory() && has(join(staging, only.name))) return join(staging, only.name);
  throw fail(file, 'no plugin.json (or SKILL.md) at the top of the archive or of its single top-level folder');
}

/** Checks one entry name and type; returns its safe relative path. */
function checkEntry(file: string, rawPath: string, type: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters in entry names are what is refused
  if (/[\u0000-\u001f]/.test(rawPath)) throw fail(file, `entry ${JSON.stringify(rawPath)} has control characters`);
  const path = rawPath.replace(/\\/g, '/');
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) throw fail(file, `entry ${JSON.stringify(rawPath)} has an absolute path`);
  if (path.split('/').includes('..')) throw fail(file, `entry ${JSON.stringify(rawPath)} leaves the archive (..)`);
  if (type !== 'file' && type !== 'directory')
    throw fail(file, `entry ${JSON.stringify(rawPath)} is a ${type}; only files and folders are allowed`);
  const clean = normalize(path).replace(/\/+$/, '');
  return clean === '.' || clean === '' ? undefined : clean;
}

function tarType(type: string): string {
  switch (type) {
    case 'File':
    case 'OldFile':
    case 'ContiguousFile':
      return 'file';
    case 'Directory':
      return 'directory';
    case 'SymbolicLink':
      return 'symbolic link';
    case 'Link':
      return 'hard link';
    default:
      return type.toLowerCase();
  }
}

async function untar(file: string, staging: string, maxBytes: number): Promise<void> {
  // Loaded on first install only: the archive libraries are not needed to run plugins.
  const tar = await import('tar');
  const entries: EntryInfo[] = [];
  let total = 0;
  let problem: HomeAgentError | undefined;
  await tar.t({
    file,
    onReadEntry: (entry) => {
      if (problem) return;
      try {
        // pax/global headers carry metadata, not files.
        if (entry.type === 'GlobalExtendedHeader' || entry.type === 'ExtendedHeader') return;
        const type = tarType(entry.type);
        const path = checkEntry(file, entry.path, type);
        total += entry.size ?? 0;
        if (entries.length >= MAX_ARCHIVE_ENTRIES) throw fail(file, `it has more than ${MAX_ARCHIVE_ENTRIES} entries`);
        if (total > maxBytes) throw fail(file, `it unpacks to more than ${maxBytes} bytes`);
        if (path) entries.push({ path, type: type as EntryInfo['type'], size: entry.size ?? 0 });
      } catch (error) {
        problem = error as HomeAgentError;
      }
    },
  });
  if (problem) throw problem;
  await tar.x({
    file,
    cwd: staging,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    // Executable bits survive (scripts of skills); nothing group- or world-writable.
    umask: 0o022,
    filter: (_path, entry) => 'type' in entry && (entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'Directory'),
  });
}

async function unzip(file: string, staging: string, maxBytes: number): Promise<void> {
  const { default: yauzl } = await import('yauzl');
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (error, handle) =>
      error ? reject(fail(file, describeError(error), error)) : resolve(handle),
    ),
  );
  let total = 0;
  let count = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (error) => reject(fail(file, describeError(error), error)));
      zip.on('end', resolve);
      zip.on('entry', (entry: ZipEntry) => {
        void (async () => {
          const mode = (entry.externalFileAttributes >>> 16) & 0o170000;
          const isDir = entry.fileName.endsWith('/');
          const type = isDir
            ? 'directory'
            : mode === 0o120000
              ? 'symbolic link'
              : mode === 0 || mode === 0o100000
                ? 'file'
                : 'special file';
          const path = checkEntry(file, entry.fileName, type);
          if (++count > MAX_ARCHIVE_ENTRIES) throw fail(file, `it has more than ${MAX_ARCHIVE_ENTRIES} entries`);
          total += entry.uncompressedSize;
          if (total > maxBytes) throw fail(file, `it unpacks to more than ${maxBytes} bytes`);
          if (path) {
            const target = join(staging, path);
            if (isDir) mkdirSync(target, { recursive: true, mode: 0o755 });
            else {
              mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
              const stream = await new Promise<NodeJS.ReadableStream>((ok, ko) =>
                zip.openReadStream(entry, (error, s) => (error ? ko(error) : ok(s))),
              );
              const executable = ((entry.externalFileAttributes >>> 16) & 0o111) !== 0;
              await pipeline(stream, createWriteStream(target, { flags: 'wx', mode: executable ? 0o755 : 0o644 }));
            }
          }
          zip.readEntry();
        })().catch(reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}
