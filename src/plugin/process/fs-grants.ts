/**
 * What a plugin process may read and write under Node's permission model: the runtime's own
 * compiled files, the plugin's folder, its private data folder and the fs_paths its manifest
 * declares (`${data_dir}` is the daemon's data directory, `${plugin_data}` the plugin's own).
 *
 * Node follows symbolic links without checking where they lead, so a link inside a granted folder
 * would open everything it points to; {@link findEscapingSymlinks} finds such links before the
 * child starts (see docs/decisions/0002-process-plugins.md).
 */
import { type Dirent, existsSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { HomeAgentError } from '../../shared/errors.js';
import { PACKAGE_ROOT } from '../../shared/version.js';
import type { RuntimeContext } from '../runtime.js';

export interface FsGrants {
  read: string[];
  write: string[];
}

const RUNTIME_DIR = join(PACKAGE_ROOT, 'dist', 'src', 'plugin', 'process');

/** The compiled child runtime; the daemon always runs this, also when its own code runs from src/ (tests). */
export const CHILD_RUNTIME_ENTRY = join(RUNTIME_DIR, 'child-runtime.js');

/**
 * The daemon's files the child must read: the runtime's folder and everything child-runtime.ts
 * imports outside it. Adding an import there means adding it here (the permission tests fail otherwise).
 */
export const RUNTIME_READS: readonly string[] = [RUNTIME_DIR, join(PACKAGE_ROOT, 'dist', 'src', 'shared', 'line-decoder.js')];

export function fsGrants(dc: Pick<RuntimeContext, 'dir' | 'manifest' | 'dataDir' | 'context'>): FsGrants {
  const pluginData = dc.context.paths.data;
  const read = [...RUNTIME_READS, dc.dir, pluginData];
  const write = [pluginData];
  for (const { path, mode } of dc.manifest.permissions?.fs_paths ?? []) {
    const granted = expandFsPath(path, dc.dataDir, pluginData, dc.manifest.name);
    read.push(granted);
    if (mode === 'rw') write.push(granted);
  }
  return { read: withRealPaths(read), write: withRealPaths(write) };
}

/**
 * Resolves one manifest path. Node reads `*` in a grant as a wildcard, so a path with one is
 * refused rather than granting more than it says; `..` is refused so that a grant reads as what it
 * opens.
 */
export function expandFsPath(path: string, dataDir: string, pluginData: string, plugin: string): string {
  const expanded = path.replace(/^\$\{data_dir\}/, dataDir).replace(/^\$\{plugin_data\}/, pluginData);
  const problem = !isAbsolute(expanded)
    ? 'is not absolute'
    : expanded.includes('*')
      ? 'contains `*`, which Node would read as a wildcard'
      : expanded.split('/').includes('..')
        ? 'contains `..`'
        : undefined;
  if (problem)
    throw new HomeAgentError('HA_ERR_PLUGIN_PERMISSION', `plugin ${plugin}: permissions.fs_paths entry ${JSON.stringify(path)} ${problem}`);
  return resolve(expanded);
}

/** Each path, plus its real path when that differs, so access through either spelling is granted. */
function withRealPaths(paths: readonly string[]): string[] {
  const all = new Set<string>();
  for (const path of paths) {
    all.add(path);
    if (existsSync(path)) all.add(realpathSync(path));
  }
  return [...all];
}

export interface SymlinkScan {
  /** `link -> target` for each link that leads outside every granted path. */
  escapes: string[];
  /** True when the scan stopped at `maxEntries` before seeing everything. */
  truncated: boolean;
}

/** Walks `roots` (without following links) and reports links whose target is outside `granted`. */
export function findEscapingSymlinks(roots: readonly string[], granted: readonly string[], maxEntries = 20_000): SymlinkScan {
  const allowed = granted.filter((p) => existsSync(p)).map((p) => realpathSync(p));
  const inside = (target: string) => allowed.some((a) => target === a || target.startsWith(a.endsWith(sep) ? a : a + sep));
  const escapes: string[] = [];
  const queue = roots.filter((r) => existsSync(r));
  let seen = 0;
  while (queue.length > 0) {
    const dir = queue.shift() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > maxEntries) return { escapes, truncated: true };
      const path = join(dir, entry.name);
      if (entry.isDirectory()) queue.push(path);
      else if (entry.isSymbolicLink()) {
        const target = linkTarget(path);
        if (!inside(target)) escapes.push(`${path} -> ${target}`);
      }
    }
  }
  return { escapes, truncated: false };
}

function linkTarget(link: string): string {
  try {
    return realpathSync(link);
  } catch {
    // A dangling link may still be pointed somewhere real later: judge it by what it names.
    return resolve(dirname(link), readlinkSync(link));
  }
}
