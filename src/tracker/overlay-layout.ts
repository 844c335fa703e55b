/**
 * Where the overlay back end keeps its layers. lower (the last good state), upper (pending changes)
 * and work (overlayfs scratch) must live on one filesystem and never inside the merged root, so
 * they sit together under <stateDir>/overlay; the merged root is where plugins are loaded from.
 * The journal and the "initialised" marker sit next to the layers so that a privileged helper
 * given only <stateDir> can finish a half-done commit or rollback.
 */
import { join, resolve } from 'node:path';
import { HomeAgentError } from '../shared/errors.js';

export interface OverlayLayout {
  /** <stateDir>/overlay: everything the back end owns except the merged root. */
  base: string;
  lower: string;
  upper: string;
  work: string;
  /** The mount point: the tree plugins see. */
  merged: string;
  /** Present while a commit or rollback is under way (JSON: {@link OverlayJournal}). */
  journal: string;
  /** Present once the first good state has been taken from the tree as found. */
  initialised: string;
}

/** What a crash-interrupted commit or rollback needs to be finished by the next start. */
export type OverlayJournal =
  | { op: 'commit' /** Upper dirs (tree-relative) whose lower contents are hidden, found while mounted. */; opaque: string[] }
  | { op: 'rollback' };

export function overlayLayout(root: string, stateDir: string): OverlayLayout {
  const merged = resolve(root);
  const base = join(resolve(stateDir), 'overlay');
  for (const [name, path] of [
    ['root', merged],
    ['stateDir', base],
  ] as const) {
    // overlayfs mount options are comma-separated and lowerdir lists are colon-separated; a path
    // carrying either (or a backslash, the escape) would be cut up by the kernel.
    if (/[,:\\]/.test(path)) {
      throw new HomeAgentError(
        'HA_ERR_CONFIG_INVALID',
        `overlay tracker ${name} ${JSON.stringify(path)} contains ',', ':' or '\\', which overlayfs mount options cannot carry`,
      );
    }
  }
  if (base === merged || base.startsWith(`${merged}/`)) {
    throw new HomeAgentError(
      'HA_ERR_CONFIG_INVALID',
      `overlay tracker stateDir ${JSON.stringify(stateDir)} lies inside the tracked root ${JSON.stringify(root)}`,
    );
  }
  return {
    base,
    lower: join(base, 'lower'),
    upper: join(base, 'upper'),
    work: join(base, 'work'),
    merged,
    journal: join(base, 'journal.json'),
    initialised: join(base, 'initialised'),
  };
}
