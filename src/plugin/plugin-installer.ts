/**
 * Unpacks a plugin archive (.tgz/.tar.gz or .zip) into the installed-plugins folder, through
 * src/shared/safe-archive.ts (only files and folders, no absolute paths, `..`, links or devices,
 * at most 10 000 entries and the configured number of bytes unpacked).
 * The archive is unpacked into a hidden staging folder first; its manifest is validated (and the
 * caller's checks run) there, and only then is it renamed into place, so a bad archive never
 * touches an installed plugin.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { extractArchive, sniffArchive } from '../shared/safe-archive.js';
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

export async function installArchive(options: InstallOptions): Promise<InstalledArchive> {
  const { file, installDir, maxBytes } = options;
  let size: number;
  try {
    size = statSync(file).size;
  } catch (error) {
    throw fail(file, `cannot read it: ${describeError(error)}`);
  }
  if (size > maxBytes) throw fail(file, `it is ${size} bytes; the limit is ${maxBytes} (core.plugins.install_max_bytes)`);
  const format = sniffArchive(file);
  if (!format) throw fail(file, 'it is neither a gzip-compressed tar (.tgz) nor a zip archive');
  mkdirSync(installDir, { recursive: true, mode: 0o750 });
  const staging = join(installDir, `.staging-${randomBytes(6).toString('hex')}`);
  mkdirSync(staging, { mode: 0o750 });
  try {
    await extractArchive(file, format, staging, {
      maxBytes,
      maxEntries: MAX_ARCHIVE_ENTRIES,
      keepExecutable: true,
      fail: (why, cause) => fail(file, why, cause),
    });
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

/** What marks a plugin folder: HomeAgent's manifest, a skill, or an OpenClaw package (converted when its manifest is read). */
const MANIFEST_FILES = ['plugin.json', 'SKILL.md', 'openclaw.plugin.json'];

/** The folder holding the manifest: the archive root, or its single top-level folder (`package/`, as `npm pack` makes it). */
function pluginRoot(staging: string, file: string): string {
  const has = (dir: string) => MANIFEST_FILES.some((name) => existsSync(join(dir, name)));
  if (has(staging)) return staging;
  const entries = readdirSync(staging, { withFileTypes: true });
  const only = entries.length === 1 ? entries[0] : undefined;
  if (only?.isDirectory() && has(join(staging, only.name))) return join(staging, only.name);
  throw fail(
    file,
    "no plugin.json (or SKILL.md, or OpenClaw's openclaw.plugin.json) at the top of the archive or of its single top-level folder",
  );
}
