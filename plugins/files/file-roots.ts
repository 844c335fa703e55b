/**
 * Where the files tools may look and write: the plugin's data directory (read-write) and the
 * configured roots. A requested path is resolved to a real path (the existing part through
 * realpath, the rest as plain names) and must lie inside a root, so `..`, absolute paths
 * elsewhere, /proc/self/root tricks and symlinks leading out all end up outside and are refused.
 * The tools then work on that real path only, never on the text they were given.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { ToolError } from '../../src/sdk/index.js';

export type RootMode = 'ro' | 'rw';

export interface FileRoot {
  /** Real path. */
  path: string;
  mode: RootMode;
}

export interface ConfiguredRoot {
  path: string;
  mode: RootMode;
}

export interface ResolvedPath {
  /** Real path of the target (or of its existing ancestor, plus the names below it). */
  path: string;
  /** The most specific root containing it. */
  root: FileRoot;
  exists: boolean;
}

export const MAX_PATH_LENGTH = 4096;

/**
 * The usable roots: the data directory first, then each configured root that exists (by real
 * path). Returns the roots that had to be skipped, with why, for the caller to log.
 */
export function resolveRoots(dataDir: string, configured: readonly ConfiguredRoot[]): { roots: FileRoot[]; skipped: string[] } {
  const roots: FileRoot[] = [{ path: realpathSync(dataDir), mode: 'rw' }];
  const skipped: string[] = [];
  for (const root of configured) {
    if (!isAbsolute(root.path)) {
      skipped.push(`${root.path} is not an absolute path`);
      continue;
    }
    try {
      roots.push({ path: realpathSync(root.path), mode: root.mode === 'rw' ? 'rw' : 'ro' });
    } catch {
      skipped.push(`${root.path} does not exist`);
    }
  }
  return { roots, skipped };
}

/** Resolves `requested` (absolute, or relative to the data root) for reading or writing; throws ToolError when refused. */
export function resolvePath(requested: unknown, roots: readonly FileRoot[], access: 'read' | 'write', field = 'path'): ResolvedPath {
  if (typeof requested !== 'string') throw rejected(field, 'path must be a string');
  if (requested.length > MAX_PATH_LENGTH) throw rejected(field, `path is longer than ${MAX_PATH_LENGTH} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(requested)) throw rejected(field, 'path contains NUL or control characters');
  if (requested.split('/').includes('..')) {
    throw rejected(field, `${quote(requested)} contains ".."; give the path from a root instead`, rootsHint(roots));
  }
  const dataRoot = roots[0] as FileRoot;
  const absolute = resolve(isAbsolute(requested) ? requested : join(dataRoot.path, requested));

  // The longest part that exists is resolved through realpath; the names below it do not exist yet.
  let existing = absolute;
  const missing: string[] = [];
  for (;;) {
    try {
      lstatSync(existing);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || existing === dirname(existing))
        throw rejected(field, `${quote(requested)} cannot be examined (${code})`);
      missing.unshift(basename(existing));
      existing = dirname(existing);
    }
  }
  let real: string;
  try {
    real = realpathSync(existing);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `${existing} is a symlink to nothing` : `${existing} cannot be resolved (${code})`;
    throw rejected(field, `${quote(requested)}: ${why}`);
  }
  const path = missing.length === 0 ? real : join(real, ...missing);

  const root = containingRoot(path, roots);
  if (!root) {
    const via = path === absolute ? '' : ` (it resolves to ${path})`;
    throw rejected(field, `${quote(requested)} is outside the allowed roots${via}`, rootsHint(roots));
  }
  if (access === 'write' && root.mode !== 'rw') {
    throw rejected(field, `${quote(requested)} is in the read-only root ${root.path}`, rootsHint(roots));
  }
  return { path, root, exists: missing.length === 0 };
}

/** The most specific root that contains `path`, so a read-only root inside a writable one wins. */
export function containingRoot(path: string, roots: readonly FileRoot[]): FileRoot | undefined {
  let best: FileRoot | undefined;
  for (const root of roots) {
    const inside = path === root.path || path.startsWith(root.path === sep ? sep : root.path + sep);
    if (inside && (best === undefined || root.path.length > best.path.length)) best = root;
  }
  return best;
}

/**
 * Checks what an open descriptor really is (through /proc/self/fd), closing the window between
 * resolving a path and opening it: a directory swapped for a symlink in between is caught here.
 * Where /proc is missing the check is skipped; O_NOFOLLOW still guards the last component.
 */
export function checkOpened(fd: number, root: FileRoot, field = 'path'): void {
  let actual: string;
  try {
    actual = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return;
  }
  if (containingRoot(actual, [root]) === undefined) {
    throw rejected(field, `the path changed while it was being opened and now leads to ${actual}, outside ${root.path}`);
  }
}

export function rejected(field: string, problem: string, hint?: string): ToolError {
  const detail = `HA_ERR_FILES_DENIED: ${problem}`;
  return new ToolError(hint === undefined ? { reason: 'rejected', field, detail } : { reason: 'rejected', field, detail, hint });
}

export function rootsHint(roots: readonly FileRoot[]): string {
  return `allowed roots: ${roots.map((root) => `${root.path} (${root.mode})`).join(', ')}; relative paths start at ${roots[0]?.path}`;
}

function quote(text: string): string {
  return JSON.stringify(text);
}
