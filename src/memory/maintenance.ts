/**
 * The memory maintenance service: four independent loops (archive, distill, merge, review) on
 * their own timers. A loop that fails is logged with its name and tried again at its next tick;
 * the others never notice. Nothing is kept in memory between ticks (every pass reads what to do
 * from the database), so a restart loses nothing. Ticks of one loop never overlap: the next one
 * is scheduled when the previous pass has finished.
 */
import type { Logger } from '../log/logger.js';
import type { TextAnalyzer } from '../nlp/types.js';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { ContextWindow } from './context-window.js';
import type { DocumentStore } from './document-store.js';
import type { GraphStore, SimilarEntityPair } from './graph-store.js';
import type { GraphRelation } from './graph-types.js';
import {
  type ArchiveResult,
  archivePass,
  DEFAULT_MAINTENANCE_LIMITS,
  type DistillResult,
  distillPass,
  type MaintenanceContext,
  type MaintenanceLimits,
  type MaintenanceLoopName,
  type MergeLoopResult,
  mergePass,
  type PassOptions,
  type ReviewResult,
  reviewPass,
} from './maintenance-loops.js';

export {
  type ArchiveResult,
  DEFAULT_MAINTENANCE_LIMITS,
  DISTILL_SESSION,
  type DistillResult,
  type MaintenanceLimits,
  type MaintenanceLoopName,
  type MergeLoopResult,
  type ReviewResult,
} from './maintenance-loops.js';

const MINUTE = 60_000;

/** core.agent.distill_interval, archive_interval, merge_interval, review_interval (ms). */
export const DEFAULT_MAINTENANCE_INTERVALS: Readonly<Record<MaintenanceLoopName, number>> = {
  distill: 30 * MINUTE,
  archive: 60 * MINUTE,
  merge: 120 * MINUTE,
  review: 120 * MINUTE,
};

/** Runs every loop in this order: pruning first feeds documents to distill, distill feeds entities to merge. */
export const MAINTENANCE_LOOPS: readonly MaintenanceLoopName[] = ['archive', 'distill', 'merge', 'review'];

/** Timers the service schedules with; tests pass a manual one to fire ticks without waiting. */
export interface TimerScheduler {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** Node's timers, unref'd: maintenance alone never keeps the process alive. */
export const nodeTimers: TimerScheduler = {
  set: (callback, ms) => setTimeout(callback, ms).unref(),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface MemoryMaintenanceOptions {
  window: ContextWindow;
  documents: DocumentStore;
  graph: GraphStore;
  analyzer: Pick<TextAnalyzer, 'extract'>;
  /**
   * Receives at most 5 similar entity pairs per merge tick; the daemon turns them into a
   * consolidation task on the internal self-input channel. The same pairs come again next tick
   * until the LLM merges them or marks them no-merge.
   */
  proposeConsolidation: (pairs: SimilarEntityPair[]) => void | Promise<void>;
  /** Receives low-confidence relations; they are marked reviewed once this returns without throwing. */
  reviewRelations: (relations: GraphRelation[]) => void | Promise<void>;
  clock: Clock;
  log: Logger;
  timers?: TimerScheduler;
  /** Milliseconds between the end of one pass and the start of the next, per loop. */
  intervals?: Partial<Record<MaintenanceLoopName, number>>;
  limits?: Partial<MaintenanceLimits>;
}

export type LoopOutcome<R> = { ok: true; result: R; duration_ms: number } | { ok: false; error: string; duration_ms: number };

export interface MaintenanceReport {
  archive: LoopOutcome<ArchiveResult>;
  distill: LoopOutcome<DistillResult>;
  merge: LoopOutcome<MergeLoopResult>;
  review: LoopOutcome<ReviewResult>;
}

type LoopResults = { archive: ArchiveResult; distill: DistillResult; merge: MergeLoopResult; review: ReviewResult };

const PASSES: { [K in MaintenanceLoopName]: (ctx: MaintenanceContext, options: PassOptions) => Promise<LoopResults[K]> } = {
  archive: archivePass,
  distill: distillPass,
  merge: mergePass,
  review: reviewPass,
};

export class MemoryMaintenance implements Service {
  readonly name = 'memory-maintenance';
  readonly #options: MemoryMaintenanceOptions;
  readonly #timers = new Map<MaintenanceLoopName, unknown>();
  readonly #running = new Map<MaintenanceLoopName, Promise<unknown>>();
  #controller = new AbortController();
  #started = false;

  constructor(options: MemoryMaintenanceOptions) {
    this.#options = options;
  }

  /** The interval of each loop after defaults (ms). */
  get intervals(): Readonly<Record<MaintenanceLoopName, number>> {
    return { ...DEFAULT_MAINTENANCE_INTERVALS, ...this.#options.intervals };
  }

  /** Schedules each loop's first tick one interval from now (startup stays light). */
  async start(_signal: AbortSignal): Promise<void> {
    const intervals = this.intervals;
    for (const loop of MAINTENANCE_LOOPS) {
      const ms = intervals[loop];
      if (!Number.isFinite(ms) || ms <= 0) {
        throw new HomeAgentError('HA_ERR_CONFIG_INVALID', `the ${loop} maintenance interval must be a positive number of ms (got ${ms})`);
      }
    }
    if (this.#controller.signal.aborted) this.#controller = new AbortController();
    this.#started = true;
    for (const loop of MAINTENANCE_LOOPS) this.#schedule(loop);
  }

  /** Clears every timer, cancels the running passes (they stop at their next safe point) and waits for them. */
  async stop(): Promise<void> {
    this.#started = false;
    for (const handle of this.#timers.values()) this.#scheduler.clear(handle);
    this.#timers.clear();
    this.#controller.abort(new HomeAgentError('HA_ERR_ABORTED', 'memory maintenance is stopping'));
    await this.whenIdle();
  }

  /**
   * Runs every loop once, one after the other, each until it has nothing left to do (no per-tick
   * caps). A failing loop is reported and the next one still runs. Waits for a tick of the same
   * loop that is already running. Used by the evaluation's settle() and `homeagentctl memory`.
   */
  async runAll(): Promise<MaintenanceReport> {
    return {
      archive: await this.runLoop('archive', { drain: true }),
      distill: await this.runLoop('distill', { drain: true }),
      merge: await this.runLoop('merge', { drain: true }),
      review: await this.runLoop('review', { drain: true }),
    };
  }

  /** One pass of one loop; never throws (a failure is logged with the loop name and returned). */
  async runLoop<K extends MaintenanceLoopName>(loop: K, options: { drain?: boolean } = {}): Promise<LoopOutcome<LoopResults[K]>> {
    // Chained behind the loop's running pass, so two passes of one loop never overlap.
    const previous = this.#running.get(loop) ?? Promise.resolve();
    const pass = previous.then(() => this.#pass(loop, options.drain ?? false));
    this.#running.set(loop, pass);
    try {
      return await pass;
    } finally {
      if (this.#running.get(loop) === pass) this.#running.delete(loop);
    }
  }

  /** Resolves when no pass is running. */
  async whenIdle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running.values()]);
  }

  get #scheduler(): TimerScheduler {
    return this.#options.timers ?? nodeTimers;
  }

  async #pass<K extends MaintenanceLoopName>(loop: K, drain: boolean): Promise<LoopOutcome<LoopResults[K]>> {
    const { clock, log } = this.#options;
    const signal = this.#controller.signal;
    const started = clock.monotonic();
    try {
      signal.throwIfAborted();
      const result = await PASSES[loop](this.#context(), { drain, signal });
      const duration_ms = clock.monotonic() - started;
      log.debug({ loop, duration_ms, result }, 'memory maintenance pass done');
      return { ok: true, result, duration_ms };
    } catch (error) {
      const duration_ms = clock.monotonic() - started;
      if (signal.aborted) log.debug({ loop }, 'memory maintenance pass cancelled');
      else log.error({ loop, error: describeError(error), duration_ms }, 'memory maintenance pass failed');
      return { ok: false, error: describeError(error), duration_ms };
    }
  }

  #context(): MaintenanceContext {
    const o = this.#options;
    return {
      window: o.window,
      documents: o.documents,
      graph: o.graph,
      analyzer: o.analyzer,
      proposeConsolidation: o.proposeConsolidation,
      reviewRelations: o.reviewRelations,
      limits: { ...DEFAULT_MAINTENANCE_LIMITS, ...o.limits },
      log: o.log,
    };
  }

  #schedule(loop: MaintenanceLoopName): void {
    if (!this.#started || this.#timers.has(loop)) return;
    const handle = this.#scheduler.set(() => {
      this.#timers.delete(loop);
      void this.runLoop(loop).then(() => this.#schedule(loop));
    }, this.intervals[loop]);
    this.#timers.set(loop, handle);
  }
}
