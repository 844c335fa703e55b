/**
 * Reading and applying an overlayfs upper layer by hand, for the operations overlayfs itself does
 * not offer: listing what the upper layer changed, merging it into the lower layer (commit) and
 * throwing it away (rollback). All of these must run while the overlay is NOT mounted, except
 * pending computation and the merged-view opaque probe, which read a live mount.
 *
 * Upper-layer encoding (Documentation/filesystems/overlayfs.rst): a character device 0/0 is a
 * whiteout (the lower entry of that name is deleted); a directory with the xattr
 * trusted.overlay.opaque = "y" hides every lower entry below it; any other non-directory or a
 * directory over a lower non-directory replaces the lower entry outright. The tracker mounts with
 * redirect_dir=off and metacopy=off, so upper files always carry their full content and renamed
 * directories are plain copies — the only encodings this module has to know.
 */
import { execFile } from 'node:child_process';
import type { Stats } from 'node:fs';
import { chmod, copyFile, lchown, lstat, mkdir, readdir, readFile, readlink, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findOnPath } from '../shared/find-on-path.js';
import { diffManifests, manifestOf, sha256OfFile, treePathParts } from './tree-manifest.js';
import type { FileChange, TreeManifest } from './types.js';

const execFileAsync = promisify(execFile);

/** Answers whether the upper directory at a tree-relative path hides the lower contents below it. */
export type OpaqueProbe = (relDir: string) => Promise<boolean>;

/** Called after each named step; tests throw from it to simulate a crash at that point. */
export type FaultHook = (step: string) => void;

/** Prefix of the temporary names merge writes before renaming over the real entry. */
const MERGE_TEMP_PREFIX = '.ha-merge-';

export function isWhiteout(stats: Stats): boolean {
  return stats.isCharacterDevice() && stats.rdev === 0;
}

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw error;
  }
}

function childPath(rel: string, name: string): string {
  return rel === '' ? name : `${rel}/${name}`;
}

function sortedNames(names: string[]): string[] {
  return names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Reads trusted.overlay.opaque through getfattr (node has no xattr API). Answers null when the
 * attr package is not installed; the caller then falls back to {@link mergedViewOpaqueProbe}.
 */
export function xattrOpaqueProbe(upper: string): OpaqueProbe | null {
  const getfattr = findOnPath('getfattr');
  if (getfattr === undefined) return null;
  return async (relDir) => {
    try {
      const { stdout } = await execFileAsync(getfattr, [
        '--absolute-names',
        '--only-values',
        '-h',
        '-n',
        'trusted.overlay.opaque',
        join(upper, relDir),
      ]);
      return stdout.trim() === 'y';
    } catch {
      // getfattr exits non-zero when the attribute is absent.
      return false;
    }
  };
}

/**
 * Tells opacity without xattrs by looking at a live mount: an upper dir hides its lower contents
 * when some lower child is neither in the upper dir nor visible in the merged view. A dir whose
 * lower children are all shadowed by upper entries answers false, which merges the same either way.
 */
export function mergedViewOpaqueProbe(upper: string, lower: string, merged: string): OpaqueProbe {
  return async (relDir) => {
    const lowerStats = await lstatOrNull(join(lower, relDir));
    if (lowerStats === null || !lowerStats.isDirectory()) return false;
    const upperNames = new Set(await readdir(join(upper, relDir)));
    for (const name of await readdir(join(lower, relDir))) {
      if (upperNames.has(name)) continue;
      if ((await lstatOrNull(join(merged, relDir, name))) === null) return true;
    }
    return false;
  };
}

/** The upper dirs (tree-relative) that sit over a lower dir and hide it, by the given probe. */
export async function findOpaqueDirs(upper: string, lower: string, isOpaque: OpaqueProbe): Promise<string[]> {
  const found: string[] = [];
  const visit = async (rel: string): Promise<void> => {
    for (const entry of await readdir(join(upper, rel), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = childPath(rel, entry.name);
      const lowerStats = await lstatOrNull(join(lower, path));
      if (lowerStats?.isDirectory() && (await isOpaque(path))) found.push(path);
      await visit(path);
    }
  };
  await visit('');
  return sortedNames(found);
}

/**
 * What the upper layer changes relative to the lower one, sorted by path. Only files the upper
 * layer touches are hashed: upper files against their lower counterparts, and the lower files
 * that whiteouts, opaque dirs or type changes hide (deleted unless the upper layer has them again).
 * A copy-up with unchanged content (a chmod) is not a content change and is not listed.
 */
export async function pendingFromUpper(upper: string, lower: string, isOpaque: OpaqueProbe): Promise<FileChange[]> {
  const before: TreeManifest = { files: new Map() };
  const after: TreeManifest = { files: new Map() };
  const hidden: string[] = [];

  const visit = async (rel: string): Promise<void> => {
    for (const entry of await readdir(join(upper, rel), { withFileTypes: true })) {
      const path = childPath(rel, entry.name);
      const upperPath = join(upper, path);
      const stats = await lstat(upperPath);
      if (isWhiteout(stats)) {
        hidden.push(path);
      } else if (stats.isDirectory()) {
        const lowerStats = await lstatOrNull(join(lower, path));
        if (lowerStats !== null && (!lowerStats.isDirectory() || (await isOpaque(path)))) hidden.push(path);
        await visit(path);
      } else if (stats.isFile() || stats.isSymbolicLink()) {
        after.files.set(path, stats.isFile() ? await sha256OfFile(upperPath) : `symlink:${await readlink(upperPath)}`);
        hidden.push(path);
      }
      // Other device nodes, fifos and sockets are not plugin content (as in manifestOf).
    }
  };
  await visit('');

  for (const path of hidden) {
    const lowerStats = await lstatOrNull(join(lower, path));
    if (lowerStats === null) continue;
    if (lowerStats.isDirectory()) {
      for (const [sub, hash] of (await manifestOf(join(lower, path))).files) before.files.set(`${path}/${sub}`, hash);
    } else if (lowerStats.isFile()) {
      before.files.set(path, await sha256OfFile(join(lower, path)));
    } else if (lowerStats.isSymbolicLink()) {
      before.files.set(path, `symlink:${await readlink(join(lower, path))}`);
    }
  }
  return diffManifests(before, after);
}

/**
 * Applies the upper layer to the lower one, so that lower alone shows what the mount showed. Safe
 * to run again after a crash part-way (the upper layer is read, never changed, and every step
 * replaces rather than appends), which is what makes the commit journal work. Each file lands by
 * rename from a temporary name, so no lower file is ever seen half written. Modes are copied, and
 * so are owners when the merge runs as root (the privileged helper in production): a copy would
 * otherwise belong to root, and the daemon user could no longer change that file or write into
 * that folder through the mount once overlayfs copies it up again with the lower owner.
 */
export async function mergeUpperIntoLower(
  upper: string,
  lower: string,
  options: { isOpaque: OpaqueProbe; faultAfter?: FaultHook },
): Promise<void> {
  const keepOwner = process.getuid?.() === 0 ? (to: string, stats: Stats) => lchown(to, stats.uid, stats.gid) : async () => {};
  const visit = async (rel: string): Promise<void> => {
    for (const name of sortedNames(await readdir(join(upper, rel)))) {
      const path = childPath(rel, name);
      const from = join(upper, path);
      const to = join(lower, path);
      const stats = await lstat(from);
      const target = await lstatOrNull(to);
      if (isWhiteout(stats)) {
        await rm(to, { recursive: true, force: true });
      } else if (stats.isDirectory()) {
        if (target !== null && (!target.isDirectory() || (await options.isOpaque(path)))) await rm(to, { recursive: true, force: true });
        await mkdir(to, { recursive: true });
        // chown before chmod: a chown clears set-id bits the mode may carry.
        await keepOwner(to, stats);
        await chmod(to, stats.mode & 0o7777);
        await visit(path);
      } else if (stats.isFile() || stats.isSymbolicLink()) {
        const temp = join(lower, rel, `${MERGE_TEMP_PREFIX}${name}`);
        await rm(temp, { force: true });
        if (stats.isFile()) {
          await copyFile(from, temp);
          await keepOwner(temp, stats);
          await chmod(temp, stats.mode & 0o7777);
        } else {
          await symlink(await readlink(from), temp);
          await keepOwner(temp, stats);
        }
        // rename cannot replace a directory with a file, so a dir turned into a file goes first.
        if (target?.isDirectory()) await rm(to, { recursive: true, force: true });
        await rename(temp, to);
      }
      options.faultAfter?.(`merge:${path}`);
    }
  };
  await visit('');
}

/** Empties the upper and work dirs (rollback, or the end of a commit). Never follows symlinks. */
export async function discardUpper(upper: string, work: string): Promise<void> {
  for (const dir of [upper, work]) {
    for (const name of await readdir(dir)) await rm(join(dir, name), { recursive: true, force: true });
  }
}

/** A file's content in a layer, as TrackerBackend.readGood answers it (a symlink as its target text). */
export async function readLayerFile(layer: string, path: string): Promise<Buffer | null> {
  const full = join(layer, ...treePathParts(path));
  try {
    const stats = await lstat(full);
    if (stats.isSymbolicLink()) return Buffer.from(await readlink(full));
    return stats.isFile() ? await readFile(full) : null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}
