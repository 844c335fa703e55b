/**
 * The change tracker's records and the shapes its control methods answer (issue 10): change sets
 * of the plugins tree, the trial of the newest ones, and what the supervisor and the plugin host
 * need from each other. Kept apart from the back ends (types.ts), which only know files.
 */

import type { ChangeDiff, ChangeFile, ChangeSet, ChangeStatus, ChangeSummary, TrackerStatus, TrialState } from '../api/changes.js';

export type { ChangeDiff, ChangeFile, ChangeSet, ChangeStatus, ChangeSummary, TrackerStatus, TrialState };

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
