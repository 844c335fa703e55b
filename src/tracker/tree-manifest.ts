/**
 * Snapshots of a plugins tree (path → content hash) and the difference between two of them. Both
 * tracker back ends list their pending changes with these, and change-set recording takes one
 * before and one after each tool call to tell which files the call touched. The walk uses lstat
 * only: a symlink is recorded as its target text and never followed, so a link pointing out of the
 * tree cannot pull outside files into a change set. The change tracker walks the whole tree twice per
 * tracked call, so it passes a FileHashCache: a file whose lstat is unchanged is not read again.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { HomeAgentError } from '../shared/errors.js';
import type { FileChange, TreeManifest } from './types.js';

const SYMLINK_PREFIX = 'symlink:';

/**
 * Content hashes of files keyed by their lstat identity (device, inode, size, mtime and ctime in
 * nanoseconds): any write changes mtime and ctime, and ctime cannot be set back by a program, so
 * an equal key means equal content. Timestamps are coarse on many filesystems (a kernel tick, or 2 s
 * on FAT), so a file changed within RACY_MARGIN_MS of being hashed could change again without its
 * key changing; such "racy" files are hashed every time until they are old enough (git's index does
 * the same). Only the entries the latest walk used are kept, so the cache never outgrows the tree.
 */
export class FileHashCache {
  /** Hashes answered from the cache and files read, since construction (for tests and benchmarks). */
  hits = 0;
  misses = 0;
  #entries = new Map<string, string>();
  readonly #now: () => number;

  /** `now`: wall-clock milliseconds, compared with file timestamps (never a test's fake clock). */
  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** The file's hex SHA-256, from the cache when its lstat identity is unchanged. */
  async hash(file: string, used: Map<string, string>): Promise<string> {
    const before = await lstat(file, { bigint: true });
    const key = statKey(before);
    const known = this.#entries.get(key);
    if (known !== undefined) {
      this.hits++;
      used.set(key, known);
      return known;
    }
    this.misses++;
    const startedAt = this.#now();
    const hash = await sha256OfFile(file);
    const after = await lstat(file, { bigint: true });
    // Changed while being read, or so recently that a further change could keep the same key.
    const racy = Number(after.ctimeMs) > startedAt - RACY_MARGIN_MS || Number(after.mtimeMs) > startedAt - RACY_MARGIN_MS;
    if (statKey(after) === key && !racy) used.set(key, hash);
    return hash;
  }

  /** Keeps only what one walk used: files gone or changed since drop out. */
  replace(used: Map<string, string>): void {
    this.#entries = used;
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** Longer than the coarsest timestamp granularity a plugins tree may sit on (FAT: 2 s). */
export const RACY_MARGIN_MS = 3000;

function statKey(stat: { dev: bigint; ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint }): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

/**
 * Every regular file and symlink under `root`; an absent root is an empty tree (nothing made yet).
 * With a cache, unchanged files are not read again.
 */
export async function manifestOf(root: string, cache?: FileHashCache): Promise<TreeManifest> {
  const files = new Map<string, string>();
  try {
    await lstat(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { files };
    throw error;
  }
  const used = new Map<string, string>();
  await walk(root, '', files, (full) => (cache ? cache.hash(full, used) : sha256OfFile(full)));
  cache?.replace(used);
  return { files };
}

async function walk(root: string, rel: string, files: Map<string, string>, hash: (file: string) => Promise<string>): Promise<void> {
  const entries = await readdir(rel === '' ? root : join(root, rel), { withFileTypes: true });
  for (const entry of entries) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
    const full = join(root, path);
    try {
      // Dirent types come from lstat-like readdir data, so a symlink to a folder is a symlink here.
      if (entry.isDirectory()) await walk(root, path, files, hash);
      else if (entry.isSymbolicLink()) files.set(path, `${SYMLINK_PREFIX}${await readlink(full)}`);
      else if (entry.isFile()) files.set(path, await hash(full));
      // Sockets, fifos and devices are not plugin content; they are neither tracked nor restored.
    } catch (error) {
      // Removed between readdir and reading it (a plugin's temporary file): it is not in this state.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/** Whether a manifest value stands for a symlink (its target) rather than a file's content hash. */
export function isSymlinkEntry(value: string | undefined): boolean {
  return value?.startsWith(SYMLINK_PREFIX) === true;
}

/** Whether two manifests list the same paths with the same contents. */
export function sameManifest(a: TreeManifest, b: TreeManifest): boolean {
  if (a.files.size !== b.files.size) return false;
  for (const [path, value] of a.files) if (b.files.get(path) !== value) return false;
  return true;
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
export function changeHash(value: string | undefined): string | null {
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
