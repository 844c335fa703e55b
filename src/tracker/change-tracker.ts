/**
 * The change tracker service (issue 10): records what each tracked call (a files or cmd tool call,
 * a plugin install) did to the plugins tree as a change set, puts it on trial, and commits or rolls
 * back every change on trial as a whole when the supervisor (or a person) decides. A trial marker
 * file exists from before a tracked call runs until its change is decided, so a crash or power cut
 * in between rolls the change back at the next start, before any plugin loads it.
 *
 * Why the pieces are where they are:
 * - The back end (userspace copy or overlayfs) only knows files: the last good state and the
 *   pending difference. Change sets, their trial and their history live here and in the database.
 * - Tracked operations, commits and rollbacks run one at a time: a manifest taken before and after
 *   a call can only be attributed to that call if nothing else the tracker does runs meanwhile.
 * - Differences nobody tracked (a person editing files while HomeAgent runs or is stopped) are
 *   recorded as actor `outside` and go on trial like any change, so nothing is ever committed as
 *   the last good state without having been on trial.
 * - On the overlay back end the plugins loaded from the tree are stopped around a commit or
 *   rollback: the helper cannot unmount the overlay while they hold files in it.
 */
import { lstat, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import type { EventBus } from '../events/event-bus.js';
import type { AuditRecord, Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { ManagedDatabase } from '../store/database.js';
import { ChangeStore, type NewChangeSet } from './change-store.js';
import type {
  ChangeDiff,
  ChangeFile,
  ChangeOrigin,
  ChangeSet,
  ChangeStatus,
  ChangeSummary,
  SupervisedTracker,
  TrackedPluginHost,
  TrackerStatus,
  TrialState,
} from './change-types.js';
import { KeptContents, planRevert, restoreFiles } from './kept-contents.js';
import { changeHash, diffManifests, FileHashCache, isSymlinkEntry, manifestOf, sameManifest } from './tree-manifest.js';
import { readTrialMarker, removeTrialMarker, type TrialMarker, writeTrialMarker } from './trial-marker.js';
import type { FileChange, TrackerBackend, TreeManifest } from './types.js';
import { changeDiff } from './unified-diff.js';

export interface ChangeTrackerOptions {
  /** undefined: core.tracker.backend is off; track() just runs and the methods answer HA_ERR_TRACKER_OFF. */
  backend: TrackerBackend | undefined;
  /** Holds trial.json and kept/ (contents of changed files). */
  stateDir: string;
  /** The state database (synchronous FULL). */
  database: () => ManagedDatabase;
  plugins: TrackedPluginHost;
  settings: () => Config['core']['tracker'];
  events: EventBus;
  log: Logger;
  audit: (record: AuditRecord) => void;
  clock: Clock;
}

export interface TrackOptions {
  /** false: the caller loads the changed plugins itself (uninstall); default: refresh() them. */
  activate?: boolean;
}

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 1000;

const STARTUP_ACTOR = 'startup';
const STARTUP_REASON = 'HomeAgent restarted while a change was on trial';
const DAY_MS = 86_400_000;

/** A manifest before and after a recorded change, to tell files from symlinks. */
interface Manifests {
  before: TreeManifest;
  after: TreeManifest;
}

export class ChangeTracker implements Service, SupervisedTracker {
  readonly name = 'tracker';
  readonly #options: ChangeTrackerOptions;
  readonly #backend: TrackerBackend | undefined;
  readonly #store: ChangeStore;
  readonly #kept: KeptContents;
  readonly #hashes = new FileHashCache();
  #started = false;
  /** The tree as the tracker last saw it: a difference from it was made by no tracked call. */
  #lastSeen: TreeManifest | undefined;
  #trial: TrialState | null = null;
  /** Whether trial.json is known to exist (saves an fsync per tracked call during a trial). */
  #markerWritten = false;
  #startupRollbacks: ChangeSet[] = [];
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: ChangeTrackerOptions) {
    this.#options = options;
    this.#backend = options.backend;
    this.#store = new ChangeStore(options.database);
    this.#kept = new KeptContents(join(options.stateDir, 'kept'));
  }

  /**
   * Prepares the back end and, before any plugin loads: rolls back a change a stop interrupted
   * (the trial marker or a change set on trial), or puts files changed while HomeAgent was stopped
   * on trial.
   */
  async start(_signal: AbortSignal): Promise<void> {
    const backend = this.#backend;
    if (!backend) {
      this.#options.log.info('change tracker is off (core.tracker.backend: off): plugin changes are not recorded or rolled back');
      return;
    }
    await backend.start();
    this.#store.open();
    await mkdir(this.#options.stateDir, { recursive: true });
    this.#started = true;
    await this.#exclusive(() => this.#recoverAtStart(backend));
  }

  async stop(): Promise<void> {
    // A tracked call or decision in progress finishes first: its change set must be complete.
    await this.#queue.catch(() => {});
    this.#started = false;
    await this.#backend?.stop();
  }

  /** false when core.tracker.backend is off. */
  get enabled(): boolean {
    return this.#backend !== undefined;
  }

  /** The change sets the start rolled back (the supervisor announces them once outputs exist). */
  startupRollbacks(): ChangeSet[] {
    return this.#startupRollbacks;
  }

  /** Runs `run` and records what it did to the plugins tree; a change goes on trial and is activated. */
  async track<T>(origin: ChangeOrigin, run: () => Promise<T>, options: TrackOptions = {}): Promise<T> {
    const backend = this.#backend;
    if (!backend) return run();
    this.#requireStarted();
    return this.#exclusive(async () => (await this.#track(backend, origin, run, options, null)).result);
  }

  trial(): TrialState | null {
    return this.#trial && structuredClone(this.#trial);
  }

  async pendingPlugins(): Promise<string[]> {
    if (!this.#backend || !this.#started) return [];
    return pluginsOf((await this.#backend.pending()).map((f) => f.path));
  }

  async status(): Promise<TrackerStatus> {
    const backend = this.#backend;
    const pending = backend && this.#started ? (await backend.pending()).length : 0;
    return {
      backend: backend?.kind ?? 'off',
      root: backend?.root ?? '',
      state_dir: this.#options.stateDir,
      pending_files: pending,
      trial: this.trial(),
    };
  }

  async commitTrial(by: string): Promise<void> {
    const backend = this.#backend;
    if (!backend || !this.#started) return;
    await this.#exclusive(() => this.#commitTrial(backend, by, { includeOutside: false }));
  }

  async rollbackPending(by: string, reason: string): Promise<ChangeSet[]> {
    const backend = this.#backend;
    if (!backend || !this.#started) return [];
    return this.#exclusive(() => this.#rollbackPending(backend, by, reason, { atStartup: false }));
  }

  list(options: { limit?: number; status?: ChangeStatus } = {}): ChangeSummary[] {
    this.#requireOn();
    const limit = Math.min(MAX_LIST_LIMIT, Math.max(1, Math.floor(options.limit ?? DEFAULT_LIST_LIMIT)));
    return this.#store.list({ limit, ...(options.status !== undefined && { status: options.status }) });
  }

  show(id: number): ChangeSet {
    this.#requireOn();
    return this.#require(id);
  }

  async diff(id: number): Promise<ChangeDiff> {
    this.#requireOn();
    return changeDiff(this.#require(id), (sha) => this.#kept.read(sha));
  }

  /** Commits the trial `id` belongs to (all its change sets); answers them. */
  async commit(id: number, by: string): Promise<ChangeSet[]> {
    const backend = this.#requireOn();
    return this.#exclusive(async () => {
      const set = this.#require(id);
      if (set.status !== 'trial') {
        throw new HomeAgentError(
          'HA_ERR_CHANGE_STATE',
          `change set ${id} is ${describeStatus(set)}; only a change on trial can be committed`,
        );
      }
      return this.#commitTrial(backend, by, { includeOutside: true });
    });
  }

  /**
   * On trial: rolls the whole trial back. Committed: records a new change (on trial like any other)
   * that puts its files back as they were before it, if no later change touched them since.
   */
  async rollback(id: number, by: string): Promise<ChangeSet[]> {
    const backend = this.#requireOn();
    return this.#exclusive(async () => {
      const set = this.#require(id);
      if (set.status === 'trial') return this.#rollbackPending(backend, by, `rolled back by ${by}`, { atStartup: false });
      if (set.status === 'rolled_back')
        throw new HomeAgentError('HA_ERR_CHANGE_STATE', `change set ${id} is ${describeStatus(set)} already`);
      return this.#revert(backend, set, by);
    });
  }

  // ---- start ----

  async #recoverAtStart(backend: TrackerBackend): Promise<void> {
    let marker = await readTrialMarker(this.#options.stateDir);
    let onTrial = this.#store.withStatus('trial');
    if (marker?.phase === 'committing' && (await this.#commitWentThrough(backend, onTrial))) {
      this.#finishCommit(onTrial, marker);
      await removeTrialMarker(this.#options.stateDir);
      marker = undefined;
      onTrial = [];
    }
    this.#markerWritten = marker !== undefined;
    if (marker || onTrial.length > 0) {
      this.#startupRollbacks = await this.#rollbackPending(backend, STARTUP_ACTOR, STARTUP_REASON, { atStartup: true });
    } else {
      const pending = await backend.pending();
      if (pending.length > 0) {
        // Changed while HomeAgent was stopped. The plugins load the files when they start, which is
        // the activation; the supervisor's first rounds judge it like any other change.
        const set = await this.#record(backend, { actor: 'outside', tool: 'found_at_start' }, pending, this.#now(), null, null);
        this.#options.log.warn(
          { change_set: set.id, files: set.files.length, plugins: set.plugins },
          'tracker: plugin files changed while HomeAgent was stopped; they are on trial',
        );
      }
    }
    this.#lastSeen = await manifestOf(backend.root, this.#hashes);
  }

  /**
   * Whether a commit a stop interrupted reached the back end: nothing is pending and each file the
   * trial changed has its last content. (When the commit did not happen, the change is still pending,
   * or the overlay's recovery unit already threw the upper layer away and the files are the old ones.)
   */
  async #commitWentThrough(backend: TrackerBackend, sets: ChangeSet[]): Promise<boolean> {
    if ((await backend.pending()).length > 0) return false;
    const finalHash = new Map<string, string | null>();
    for (const set of sets) for (const file of set.files) finalHash.set(file.path, file.sha256_after);
    const tree = await manifestOf(backend.root, this.#hashes);
    return [...finalHash].every(([path, hash]) => changeHash(tree.files.get(path)) === hash);
  }

  #finishCommit(sets: ChangeSet[], marker: TrialMarker): void {
    const by = marker.by ?? STARTUP_ACTOR;
    const ids = sets.map((s) => s.id);
    this.#store.decide(ids, 'committed', { at: this.#now(), by, reason: null });
    for (const set of sets) this.#emit(set, 'committed', by, null);
    this.#options.audit({ actor: by, action: 'changes.commit_trial', change_sets: ids, finished_at_start: true });
    if (ids.length > 0) this.#options.log.warn({ change_sets: ids }, 'tracker: finished recording a commit interrupted by a stop');
  }

  // ---- tracked operations ----

  async #track<T>(
    backend: TrackerBackend,
    origin: ChangeOrigin,
    run: () => Promise<T>,
    options: TrackOptions,
    reverts: number | null,
  ): Promise<{ result: T; set: ChangeSet | undefined }> {
    const before = await this.#noticeOutside(backend);
    // Before the call may touch a file: a stop from here on rolls its change back at the next start.
    await this.#ensureMarker();
    const startedAt = this.#now();
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await run() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const after = await manifestOf(backend.root, this.#hashes);
    this.#lastSeen = after;
    const files = diffManifests(before, after);
    let set: ChangeSet | undefined;
    if (files.length === 0) {
      if (!this.#trial) await this.#dropMarker();
    } else {
      set = await this.#record(backend, origin, files, startedAt, { before, after }, reverts);
      if (options.activate !== false) await this.#activate(set.plugins, origin.actor);
    }
    // The call's own error is the caller's answer, after its change (if any) was recorded.
    if (!outcome.ok) throw outcome.error;
    return { result: outcome.value, set };
  }

  /**
   * The tree now; a difference from what the tracker last saw was made by no tracked call (a person
   * editing files): it is recorded as actor `outside`, put on trial and activated.
   */
  async #noticeOutside(backend: TrackerBackend): Promise<TreeManifest> {
    const now = await manifestOf(backend.root, this.#hashes);
    const last = this.#lastSeen;
    this.#lastSeen = now;
    if (last && !sameManifest(last, now)) {
      const set = await this.#record(
        backend,
        { actor: 'outside', tool: 'outside' },
        diffManifests(last, now),
        this.#now(),
        { before: last, after: now },
        null,
      );
      this.#options.log.warn(
        { change_set: set.id, files: set.files.length, plugins: set.plugins },
        'tracker: plugin files changed outside any tracked call; they are on trial',
      );
      await this.#activate(set.plugins, 'outside');
    }
    return now;
  }

  /** Stores a change set on trial with its kept contents and adds it to the trial. */
  async #record(
    backend: TrackerBackend,
    origin: ChangeOrigin,
    changes: FileChange[],
    startedAt: string,
    manifests: Manifests | null,
    reverts: number | null,
  ): Promise<ChangeSet> {
    await this.#ensureMarker();
    const files: ChangeFile[] = [];
    for (const change of changes) files.push({ ...change, kept: await this.#keep(backend, change, manifests) });
    const plugins = pluginsOf(files.map((f) => f.path));
    const record: NewChangeSet = {
      actor: origin.actor,
      tool: origin.tool,
      channel: origin.channel ?? null,
      task_id: origin.task_id ?? null,
      started_at: startedAt,
      finished_at: this.#now(),
      plugins,
      files,
      reverts,
    };
    const id = this.#store.insert(record);
    const set = this.#require(id);
    if (this.#trial) {
      this.#trial.change_set_ids.push(id);
      this.#trial.plugins = [...new Set([...this.#trial.plugins, ...plugins])].sort();
    } else {
      this.#trial = { change_set_ids: [id], started_at: set.started_at, plugins, activation_errors: [] };
    }
    this.#emit(set, 'trial', origin.actor, null);
    this.#options.audit({ actor: origin.actor, action: 'changes.record', change_set: id, tool: origin.tool, files: files.length, plugins });
    return set;
  }

  /** Keeps the before and after contents of one changed file; answers whether every side that exists is kept. */
  async #keep(backend: TrackerBackend, change: FileChange, manifests: Manifests | null): Promise<boolean> {
    const limit = this.#options.settings().max_kept_file_bytes;
    const keepBefore = async (sha: string): Promise<boolean> => {
      if (manifests && isSymlinkEntry(manifests.before.files.get(change.path))) return false;
      if (manifests && (await this.#kept.has(sha))) return true;
      const good = await backend.readGood(change.path);
      return good !== null && good.length <= limit && this.#kept.keep(sha, good);
    };
    const keepAfter = async (sha: string): Promise<boolean> => {
      const file = join(backend.root, change.path);
      const stat = await lstat(file);
      return stat.isFile() && stat.size <= limit && this.#kept.keep(sha, await readFile(file));
    };
    try {
      const before = change.sha256_before === null || (await keepBefore(change.sha256_before));
      return before && (change.sha256_after === null || (await keepAfter(change.sha256_after)));
    } catch (error) {
      // Gone again or unreadable: the change is recorded all the same, without its contents.
      this.#options.log.debug({ path: change.path, err: error }, 'tracker: could not keep the contents of a changed file');
      return false;
    }
  }

  async #activate(dirs: readonly string[], actor: string): Promise<void> {
    let errors: Array<{ plugin: string; error: string }>;
    try {
      errors = (await this.#options.plugins.refresh(dirs, actor)).errors;
    } catch (error) {
      errors = [{ plugin: dirs.join(', '), error: describeError(error) }];
    }
    if (errors.length === 0) return;
    this.#trial?.activation_errors.push(...errors);
    this.#options.log.warn({ errors }, 'tracker: changed plugins failed to load or start');
  }

  // ---- decisions ----

  async #commitTrial(backend: TrackerBackend, by: string, options: { includeOutside: boolean }): Promise<ChangeSet[]> {
    if (!this.#trial) return [];
    const known = this.#trial.change_set_ids.length;
    await this.#noticeOutside(backend);
    if (!options.includeOutside && this.#trial.change_set_ids.length > known) {
      // Files changed outside any tracked call since the trial began: they were just put on trial
      // and have not been tried yet, so the commit waits for the supervisor's next decision.
      this.#options.log.info('tracker: commit postponed: plugin files changed outside the trial and are on trial now');
      return [];
    }
    const ids = this.#store.withStatus('trial').map((s) => s.id);
    await writeTrialMarker(this.#options.stateDir, { phase: 'committing', written_at: this.#now(), change_set_ids: ids, by });
    this.#markerWritten = true;
    if (backend.kind === 'overlay') {
      const stopped = await this.#options.plugins.stopTracked(by);
      try {
        await backend.commit();
      } finally {
        await this.#refreshAfterDecision(stopped, by);
      }
    } else {
      await backend.commit();
    }
    this.#store.decide(ids, 'committed', { at: this.#now(), by, reason: null });
    await this.#dropMarker();
    this.#trial = null;
    const sets = ids.map((id) => this.#require(id));
    for (const set of sets) this.#emit(set, 'committed', by, null);
    const files = sets.reduce((n, s) => n + s.files.length, 0);
    this.#options.audit({ actor: by, action: 'changes.commit_trial', change_sets: ids, files });
    this.#options.log.info({ change_sets: ids, by, files }, 'tracker: committed the plugin changes on trial as the last good state');
    await this.#prune();
    return sets;
  }

  async #rollbackPending(backend: TrackerBackend, by: string, reason: string, options: { atStartup: boolean }): Promise<ChangeSet[]> {
    // At start no plugin runs yet, so there is nothing to stop or reload.
    const stopped = backend.kind === 'overlay' && !options.atStartup ? await this.#options.plugins.stopTracked(by) : [];
    let undone: FileChange[];
    try {
      undone = await backend.rollback();
    } catch (error) {
      if (stopped.length > 0) await this.#refreshAfterDecision(stopped, by);
      throw error;
    }
    const onTrial = this.#store.withStatus('trial');
    const ids = onTrial.map((s) => s.id);
    this.#store.decide(ids, 'rolled_back', { at: this.#now(), by, reason });
    await this.#dropMarker();
    this.#trial = null;
    this.#lastSeen = await manifestOf(backend.root, this.#hashes);
    const sets = ids.map((id) => this.#require(id));
    for (const set of sets) this.#emit(set, 'rolled_back', by, reason);
    if (sets.length > 0 || undone.length > 0) {
      const paths = undone.map((f) => f.path);
      this.#options.audit({ actor: by, action: 'changes.rollback_pending', change_sets: ids, reason, files: paths.length });
      this.#options.log.warn(
        { change_sets: ids, by, reason, files: paths.slice(0, 50), file_count: paths.length },
        'tracker: rolled the plugins back to their last good state',
      );
    }
    if (!options.atStartup) {
      const dirs = [...pluginsOf(undone.map((f) => f.path)), ...onTrial.flatMap((s) => s.plugins), ...stopped];
      await this.#refreshAfterDecision(dirs, by);
    }
    await this.#prune();
    return sets;
  }

  /** Reloads plugins after a commit or rollback; a plugin that fails now is logged (there is no trial left to blame). */
  async #refreshAfterDecision(dirs: readonly string[], by: string): Promise<void> {
    const unique = [...new Set(dirs)].sort();
    if (unique.length === 0) return;
    try {
      const { errors } = await this.#options.plugins.refresh(unique, by);
      if (errors.length > 0) this.#options.log.warn({ errors }, 'tracker: plugins failed to load after a commit or rollback');
    } catch (error) {
      this.#options.log.error({ err: error, plugins: unique }, 'tracker: reloading plugins after a commit or rollback failed');
    }
  }

  /** Rolls back a committed change set by recording a new change that restores its files' earlier contents. */
  async #revert(backend: TrackerBackend, set: ChangeSet, by: string): Promise<ChangeSet[]> {
    const restore = await planRevert(set, await manifestOf(backend.root, this.#hashes), this.#kept);
    const origin = { actor: by, tool: 'changes.rollback' };
    const { set: reverting } = await this.#track(backend, origin, () => restoreFiles(backend.root, restore), {}, set.id);
    this.#options.audit({ actor: by, action: 'changes.revert', change_set: set.id, reverting_change_set: reverting?.id ?? null });
    return reverting ? [reverting] : [];
  }

  // ---- pruning ----

  /** Drops decided change sets beyond core.tracker.keep_change_sets and keep_days, and kept contents no set refers to. */
  async #prune(): Promise<void> {
    const settings = this.#options.settings();
    const before = new Date(this.#options.clock.now() - settings.keep_days * DAY_MS).toISOString();
    const removed = this.#store.prune(settings.keep_change_sets, before);
    const blobs = await this.#kept.prune(this.#store.referencedHashes());
    if (removed.length > 0 || blobs > 0)
      this.#options.log.info({ change_sets: removed, kept_contents: blobs }, 'tracker: pruned old change sets');
  }

  // ---- small helpers ----

  async #ensureMarker(): Promise<void> {
    if (this.#markerWritten) return;
    await writeTrialMarker(this.#options.stateDir, { phase: 'trial', written_at: this.#now(), change_set_ids: [], by: null });
    this.#markerWritten = true;
  }

  async #dropMarker(): Promise<void> {
    await removeTrialMarker(this.#options.stateDir);
    this.#markerWritten = false;
  }

  #emit(set: ChangeSet, status: ChangeStatus, by: string, reason: string | null): void {
    this.#options.events.emit('change.state', {
      id: set.id,
      status,
      actor: set.actor,
      tool: set.tool,
      files: set.files.length,
      by,
      ...(reason !== null && { reason }),
    });
  }

  #require(id: number): ChangeSet {
    const set = this.#store.get(id);
    if (!set) {
      throw new HomeAgentError(
        'HA_ERR_CHANGE_NOT_FOUND',
        `no change set ${id} (it may have been pruned: core.tracker.keep_change_sets and keep_days)`,
      );
    }
    return set;
  }

  #requireOn(): TrackerBackend {
    if (!this.#backend) {
      throw new HomeAgentError('HA_ERR_TRACKER_OFF', 'the change tracker is off (core.tracker.backend: off): no changes are recorded');
    }
    this.#requireStarted();
    return this.#backend;
  }

  #requireStarted(): void {
    if (!this.#started) throw new HomeAgentError('HA_ERR_UNAVAILABLE', 'the change tracker is not running');
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => {});
    return run;
  }

  #now(): string {
    return new Date(this.#options.clock.now()).toISOString();
  }
}

/** Top-level folders (plugins) of tree paths, sorted and distinct. */
function pluginsOf(paths: readonly string[]): string[] {
  return [...new Set(paths.map((p) => p.split('/')[0] as string))].sort();
}

function describeStatus(set: ChangeSet): string {
  const status = set.status === 'rolled_back' ? 'rolled back' : set.status;
  return set.decided_at ? `${status} (${set.decided_at} by ${set.decided_by ?? 'unknown'})` : status;
}
