/**
 * The change tracker's records and the shapes its control methods answer (issue 10): change sets
 * of the plugins tree, the trial of the newest ones, and what the supervisor and the plugin host
 * need from each other. Kept apart from the back ends (types.ts), which only know files.
 */
import type { FileChange } from './types.js';

/**
 * trial: recorded and being tried (its files are in the tree, not yet in the last good state);
 * committed: part of the last good state; rolled_back: undone (by the supervisor or by hand).
 */
export type ChangeStatus = 'trial' | 'committed' | 'rolled_back';

/** Who made a change and through what: the actor of the call and the tool or method name. */
export interface ChangeOrigin {
  /** `agent`, `cli`, `webui:admin`, `outside` (found in the tree, made by no tracked call), ... */
  actor: string;
  /** `files_write`, `cmd_run`, `plugins.install`, `changes.rollback`, `found_at_start`, ... */
  tool: string;
  /** The conversation the call came from (tool calls): where an automatic rollback is announced. */
  channel?: string;
  task_id?: string;
}

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

/** What the tracker needs from the plugin host to activate or undo a change. */
export interface TrackedPluginHost {
  /**
   * Brings the plugins in these top-level folders of the tree in line with their files: reloads
   * changed ones, starts new ones, stops and forgets removed ones. Never throws for one plugin;
   * answers which plugins it touched and which failed to load or start.
   */
  refresh(dirs: readonly string[], actor: string): Promise<RefreshResult>;
  /**
   * Stops every running plugin loaded from the tree and answers their folder names (the overlay
   * cannot be unmounted while a plugin holds files there); refresh() starts them again.
   */
  stopTracked(actor: string): Promise<string[]>;
}

export interface RefreshResult {
  plugins: string[];
  errors: Array<{ plugin: string; error: string }>;
}

/** What the supervisor needs from the tracker. */
export interface SupervisedTracker {
  trial(): TrialState | null;
  /** Plugin folder names with uncommitted changes (in a trial or found outside one). */
  pendingPlugins(): Promise<string[]>;
  /** Commits the trial's change sets (the supervisor saw the window through healthy). */
  commitTrial(by: string): Promise<void>;
  /** Rolls every uncommitted change back, reloads the plugins concerned; answers the change sets undone. */
  rollbackPending(by: string, reason: string): Promise<ChangeSet[]>;
}
