/**
 * Snapshots of a plugins tree (path → content hash) and the difference between two of them. Both
 * tracker back ends list their pending changes with these, and change-set recording takes one
 * before and one after each tool call to tell which files the call touched. The walk uses lstat
 * only: a symlink is recorded as its target text and never followed, so a link pointing out of the
 * tree cannot pull outside files into a change set.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { HomeAgentError } from '../shared/errors.js';
import type { FileChange, TreeManifest } from './types.js';

const SYMLINK_PREFIX = 'symlink:';

/** Every regular file and symlink under `root`; an absent root is an empty tree (nothing made yet). */
export async function manifestOf(root: string): Promise<TreeManifest> {
  const files = new Map<string, string>();
  try {
    await lstat(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { files };
    throw error;
  }
  await walk(root, '', files);
  return { files };
}

async function walk(root: string, rel: string, files: Map<string, string>): Promise<void> {
  const entries = await readdir(rel === '' ? root : join(root, rel), { withFileTypes: true });
  for (const entry of entries) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
    const full = join(root, path);
    // Dirent types come from lstat-like readdir data, so a symlink to a folder is a symlink here.
    if (entry.isDirectory()) await walk(root, path, files);
    else if (entry.isSymbolicLink()) files.set(path, `${SYMLINK_PREFIX}${await readlink(full)}`);
    else if (entry.isFile()) files.set(path, await sha256OfFile(full));
    // Sockets, fifos and devices are not plugin content; they are neither tracked nor restored.
  }
}

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/**
 * A manifest value as the hex SHA-256 of FileChange: a file's hash as is, a symlink's as the
 * SHA-256 of its 'symlink:<target>' text (so a retargeted link shows up as modified).
 */
function changeHash(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!value.startsWith(SYMLINK_PREFIX)) return value;
  return createHash('sha256').update(value).digest('hex');
}

/** What turned `before` into `after`, sorted by path (plain code-unit order, the same on every machine). */
export function diffManifests(before: TreeManifest, after: TreeManifest): FileChange[] {
  const paths = new Set([...before.files.keys(), ...after.files.keys()]);
  const changes: FileChange[] = [];
  for (const path of [...paths].sort(byCodeUnits)) {
    const old = before.files.get(path);
    const now = after.files.get(path);
    if (old === now) continue;
    const op = old === undefined ? 'add' : now === undefined ? 'delete' : 'modify';
    changes.push({ path, op, sha256_before: changeHash(old), sha256_after: changeHash(now) });
  }
  return changes;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Checks a tree-relative path as FileChange defines it ('/'-separated, not absolute, no '..', no
 * empty or '.' parts, no NUL) and answers its parts; anything else would reach outside the tree.
 */
export function treePathParts(path: string): string[] {
  const parts = path.split('/');
  const bad = path === '' || path.includes('\0') || parts.some((p) => p === '' || p === '.' || p === '..');
  if (bad)
    throw new HomeAgentError('HA_ERR_FILES_DENIED', `tracker path ${JSON.stringify(path)} is not a plain path inside the plugins tree`);
  return parts;
}
