/**
 * Before and after contents of changed plugin files, kept so `changes diff` can show a change and
 * `changes rollback` of a committed change can put the old files back long after the back end's
 * last good state moved on. Content-addressed (`<dir>/<first two hex>/<sha256>`): a file changed back
 * and forth, or the same library in two plugins, is stored once. Blobs are written durably and
 * checked against their name when read, so a damaged blob reads as "not kept" rather than as wrong
 * content put back into a plugin. planRevert and restoreFiles put kept contents back into the tree.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { HomeAgentError } from '../shared/errors.js';
import type { ChangeSet } from './change-types.js';
import { changeHash, treePathParts } from './tree-manifest.js';
import { syncFolder, writeDurably } from './trial-marker.js';
import type { TreeManifest } from './types.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

export class KeptContents {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** The content with this hash, or undefined when it is not kept (or the blob no longer matches). */
  async read(sha256: string): Promise<Buffer | undefined> {
    let data: Buffer;
    try {
      data = await readFile(this.#path(sha256));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return sha256Of(data) === sha256 ? data : undefined;
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.read(sha256)) !== undefined;
  }

  /** Keeps `data` under its hash; answers false (keeping nothing) when it does not have the hash expected. */
  async keep(sha256: string, data: Buffer): Promise<boolean> {
    if (sha256Of(data) !== sha256) return false;
    if (await this.has(sha256)) return true;
    const folder = join(this.dir, sha256.slice(0, 2));
    await mkdir(folder, { recursive: true });
    await writeDurably(join(folder, sha256), data);
    return true;
  }

  /** Removes every blob whose hash is not in `referenced`; answers how many went. */
  async prune(referenced: ReadonlySet<string>): Promise<number> {
    let folders: string[];
    try {
      folders = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    let removed = 0;
    for (const folder of folders) {
      const path = join(this.dir, folder);
      let names: string[];
      try {
        names = await readdir(path);
      } catch {
        continue; // not a folder of blobs
      }
      for (const name of names) {
        // Leftover temporary files of an interrupted write go too; they are never referenced.
        if (referenced.has(name)) continue;
        await rm(join(path, name), { force: true });
        removed++;
      }
      if (names.every((name) => !referenced.has(name))) await rm(path, { recursive: true, force: true });
    }
    if (removed > 0) await syncFolder(this.dir);
    return removed;
  }

  #path(sha256: string): string {
    // A hash comes from the database; never let it name a path outside the kept folder.
    if (!SHA256_HEX.test(sha256))
      throw new HomeAgentError('HA_ERR_TRACKER_STATE', `kept content name ${JSON.stringify(sha256)} is not a SHA-256`);
    return join(this.dir, sha256.slice(0, 2), sha256);
  }
}

export function sha256Of(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * The files to put back to roll back a committed change set: refused (HA_ERR_CHANGE_STATE) when a
 * file in `tree` no longer has the content the change left (a later change touched it), or when a
 * content it needs was not kept.
 */
export async function planRevert(set: ChangeSet, tree: TreeManifest, kept: KeptContents): Promise<RestoreFile[]> {
  const touched = set.files.filter((f) => changeHash(tree.files.get(f.path)) !== f.sha256_after).map((f) => f.path);
  if (touched.length > 0) {
    throw new HomeAgentError(
      'HA_ERR_CHANGE_STATE',
      `change set ${set.id} cannot be rolled back: ${listPaths(touched)} changed since (by a later change); roll that change back first`,
    );
  }
  const restore: RestoreFile[] = [];
  const missing: string[] = [];
  for (const file of set.files) {
    const content = file.sha256_before === null ? null : await kept.read(file.sha256_before);
    if (!file.kept || content === undefined) missing.push(file.path);
    else restore.push({ path: file.path, content });
  }
  if (missing.length > 0) {
    throw new HomeAgentError(
      'HA_ERR_CHANGE_STATE',
      `change set ${set.id} cannot be rolled back: contents not kept for ${listPaths(missing)} (${NOT_KEPT_WHY})`,
    );
  }
  return restore;
}

/** Why a file's contents may not have been kept (for messages and diff notes). */
export const NOT_KEPT_WHY = 'larger than core.tracker.max_kept_file_bytes, or a symbolic link';

function listPaths(paths: readonly string[]): string {
  const shown = paths.slice(0, 10).join(', ');
  return paths.length > 10 ? `${shown} and ${paths.length - 10} more` : shown;
}

/** A file to put back as it was before a change: its content, or null when the change added it. */
export interface RestoreFile {
  path: string;
  content: Buffer | null;
}

/**
 * Puts files back into the tree `root` (rolling back a committed change): content written, added
 * files removed with the folders they leave empty. Every path is checked to stay a plain path
 * inside the tree, and every folder on the way with lstat, so a symlinked folder (pointing out of
 * the tree) is refused rather than written through; the final name is removed and created anew
 * (O_EXCL), never followed.
 */
export async function restoreFiles(root: string, files: readonly RestoreFile[]): Promise<void> {
  for (const file of files) {
    const parts = treePathParts(file.path);
    const name = parts.pop() as string;
    let dir = root;
    for (const part of parts) {
      dir = join(dir, part);
      const kind = await entryKind(dir);
      if (kind === undefined && file.content !== null) await mkdir(dir);
      else if (kind !== undefined && kind !== 'dir') throw notRestorable(file.path, `${relative(root, dir)} is not a folder`);
      else if (kind === undefined) break; // removing a file whose folder is gone already
    }
    const target = join(dir, name);
    const kind = await entryKind(target);
    if (kind === 'dir') throw notRestorable(file.path, 'a folder is in its place');
    const mode = kind === 'file' ? (await lstat(target)).mode & 0o7777 : 0o644;
    if (kind !== undefined) await rm(target, { force: true });
    if (file.content !== null) await writeFile(target, file.content, { flag: 'wx', mode });
    else await removeEmptyFolders(root, parts);
  }
}

async function removeEmptyFolders(root: string, parts: string[]): Promise<void> {
  for (let depth = parts.length; depth > 0; depth--) {
    try {
      await rmdir(join(root, ...parts.slice(0, depth)));
    } catch {
      return; // not empty (or gone): the folders above are not empty either
    }
  }
}

function notRestorable(path: string, why: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_CHANGE_STATE', `cannot put ${path} back: ${why}`);
}

async function entryKind(path: string): Promise<'dir' | 'file' | 'other' | undefined> {
  try {
    const stat = await lstat(path);
    return stat.isDirectory() ? 'dir' : stat.isFile() ? 'file' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
