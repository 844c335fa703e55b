/**
 * The wire shapes of the change tracker's control methods (changes.*) and of the trial the
 * supervisor reports: what the daemon answers and the CLI and the web page read.
 */

/** How a file changed between two states of the plugins tree. */
export type FileOp = 'add' | 'modify' | 'delete';

export interface FileChange {
  /** Relative to the tracked root, '/'-separated, never starting with '/' or containing '..'. */
  path: string;
  op: FileOp;
  /** Hex SHA-256 of the content before (null for add) and after (null for delete). */
  sha256_before: string | null;
  sha256_after: string | null;
}

/**
 * trial: recorded and being tried (its files are in the tree, not yet in the last good state);
 * committed: part of the last good state; rolled_back: undone (by the supervisor or by hand).
 */
export type ChangeStatus = 'trial' | 'committed' | 'rolled_back';

export interface ChangeSet {
  id: number;
  actor: string;
  tool: string;
  channel: string | null;
  started_at: string;
  finished_at: string;
  status: ChangeStatus;
  /** Plugin folders (top-level names in the tree) the files belong to. */
  plugins: string[];
  files: ChangeFile[];
  /** When and by whom it was committed or rolled back, and why (rollbacks). */
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
  /** Set on a change set that rolled back a committed one (`changes rollback` of a committed id). */
  reverts: number | null;
}

export interface ChangeFile extends FileChange {
  /** Whether the before and after contents were kept (files up to core.tracker.max_kept_file_bytes). */
  kept: boolean;
}

/** `changes.list` rows: a change set without its file list. */
export type ChangeSummary = Omit<ChangeSet, 'files'> & { file_count: number };

/** `changes.diff`: a unified diff per file; binary, unkept or over-long contents are described instead. */
export interface ChangeDiff {
  id: number;
  files: Array<{ path: string; op: FileChange['op']; diff: string | null; note: string | null }>;
  /** All files' diffs joined, as `git diff` would print them. */
  text: string;
}

/** The trial in progress, if any (one trial covers every change set recorded while it runs). */
export interface TrialState {
  change_set_ids: number[];
  started_at: string;
  plugins: string[];
  /** Plugins that failed to load or start when the change was activated. */
  activation_errors: Array<{ plugin: string; error: string }>;
}

export interface TrackerStatus {
  backend: 'overlay' | 'userspace' | 'off';
  root: string;
  state_dir: string;
  /** Files differing from the last good state. */
  pending_files: number;
  trial: TrialState | null;
}
