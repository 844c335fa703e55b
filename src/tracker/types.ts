/**
 * The change tracker's contract: how the plugins tree's last good state is kept apart from pending
 * changes, so a bad plugin change can be thrown away as a whole (issue 10). Both back ends
 * (UserspaceTracker, OverlayTracker) implement TrackerBackend and pass one contract suite.
 */
import type { FileChange, FileOp } from '../api/changes.js';

export type { FileChange, FileOp };

/**
 * Keeps the plugins tree's last good (committed) state apart from the pending changes made since,
 * so that the pending ones can be committed or thrown away as a whole. `root` is where plugins are
 * loaded from and written to. Implementations: UserspaceTracker (copies; works anywhere) and
 * OverlayTracker (an overlayfs lower = good, upper = pending).
 */
export interface TrackerBackend {
  readonly kind: 'overlay' | 'userspace';
  /** The merged view of the tree (what plugins see). */
  readonly root: string;
  /** Prepares its directories (and mounts, for the overlay); idempotent. A crash-left half operation is finished or undone here. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Every file that differs from the last good state, sorted by path. */
  pending(): Promise<FileChange[]>;
  /** A file's content in the last good state; null when it did not exist there. */
  readGood(path: string): Promise<Buffer | null>;
  /** Makes the current tree the last good state (pending() becomes empty). Atomic against a crash: afterwards either the old or the new good state holds, never a mix. */
  commit(): Promise<void>;
  /** Restores the last good state exactly (content, deletions and additions undone); answers what it undid. Never touches anything outside the tracked tree. Atomic against a crash like commit. */
  rollback(): Promise<FileChange[]>;
}

/** Snapshots of the tree taken around one tracked operation, to tell which files it touched. */
export interface TreeManifest {
  /** path → hex sha256 of every regular file (symlinks recorded as 'symlink:<target>'). */
  files: Map<string, string>;
}
