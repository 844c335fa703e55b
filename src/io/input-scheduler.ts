/**
 * The input scheduler (v1.3 model): every input becomes one task; exactly one task runs at a
 * time; interrupts of a strictly higher level pre-empt the running task at its next safe point;
 * every input gets exactly one terminal {@link Receipt}, whatever happens.
 *
 * Containers, in pick order:
 *  1. `immediate`: the interrupt that has just pre-empted the running task;
 *  2. the interrupt FIFOs L4..L1, compared with the top of the suspend stack (the suspended task
 *     resumes first when its effective level is >= the head's level);
 *  3. the ready FIFO (level 0 inputs).
 *
 * The runner (the agent) cooperates through {@link TaskControl}: it calls `safePoint()` between
 * steps, takes `llmSignal()` for each LLM request (aborted when a pre-emption is waiting, so the
 * request is discarded and re-sent after the safe point), and wraps tool executions and commits in
 * `critical()`.
 */
import { randomUUID } from 'node:crypto';
import type { SchedulerStats } from '../api/status.js';
import type { Logger } from '../log/logger.js';
import { type Clock, systemClock } from '../shared/clock.js';
import { type ErrorCode, HomeAgentError, toErrorEnvelope } from '../shared/errors.js';
import { DedupeWindow, dedupeKey } from './dedupe-window.js';
import { Fifo } from './fifo.js';
import type { InputEvent, Level, Receipt, TaskControl, TaskResult, TaskRunner } from './types.js';

export type { SchedulerStats };

/** Read at each submit so runtime setting changes apply to the next input. */
export interface SchedulerLimits {
  dedupe_window_ms: number;
  ready_queue_size: number;
  interrupt_queue_size: number;
}

/** Who raised the input: only built-in code (kernel, built-in plugins) may use level 4. */
export type InputOrigin = 'builtin' | 'external';

export interface SubmitOptions {
  origin: InputOrigin;
}

export interface InputSchedulerOptions {
  runner: TaskRunner;
  limits: () => SchedulerLimits;
  log: Logger;
  clock?: Clock;
  /** How long stop() waits for cancelled tasks to return before answering for them. Default 5000. */
  stopTimeoutMs?: number;
  /** The suspend stack bound (1..4, default 4, the design's structural bound); tests lower it. */
  maxSuspendDepth?: number;
  /** Task ids; random UUIDs by default. */
  newTaskId?: () => string;
}

/** The design's bound on nested pre-emptions. */
export const MAX_SUSPEND_DEPTH = 4;

const INPUT_TYPES = new Set(['text', 'audio', 'image', 'structured']);
const INTERRUPT_LEVELS = [4, 3, 2, 1] as const;
type InterruptLevel = (typeof INTERRUPT_LEVELS)[number];

/** An input waiting for (or holding) its receipt. */
interface Entry {
  input: InputEvent;
  level: Level;
  resolve: (receipt: Receipt) => void;
  settled: boolean;
  dedupe?: string;
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One input being processed: running, or suspended on the stack. */
class Task {
  readonly cancel = new AbortController();
  /** The current LLM request's controller; reset at every safe point. */
  llm: AbortController | null = null;
  preemptCount = 0;
  criticalDepth = 0;
  /** Set while suspended: settles the pending safePoint() promise. */
  resume: Deferred | null = null;
  /** Why the task was cancelled before the scheduler stopped (cancelRunning); shutdown otherwise. */
  cancelReason: string | undefined;
  done = false;
  readonly ended = deferred();

  constructor(
    readonly id: string,
    readonly entry: Entry,
  ) {}

  /** The starvation guard: each pre-emption raises the level the task competes with (at most +2). */
  get effectiveLevel(): Level {
    return Math.min(4, this.entry.level + Math.min(this.preemptCount, 2)) as Level;
  }
}

type State = 'created' | 'running' | 'stopping' | 'stopped';

export class InputScheduler {
  readonly name = 'scheduler';
  readonly #runner: TaskRunner;
  readonly #limits: () => SchedulerLimits;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #stopTimeoutMs: number;
  readonly #maxDepth: number;
  readonly #newTaskId: () => string;

  readonly #ready = new Fifo<Entry>();
  readonly #interrupts: Record<InterruptLevel, Fifo<Entry>> = { 1: new Fifo(), 2: new Fifo(), 3: new Fifo(), 4: new Fifo() };
  #interruptCount = 0;
  #immediate: Entry | null = null;
  #suspended: Task[] = [];
  #running: Task | null = null;
  readonly #dedupe = new DedupeWindow();
  /** The config defaults until the first successful read. */
  #lastLimits: SchedulerLimits = { dedupe_window_ms: 10_000, ready_queue_size: 256, interrupt_queue_size: 64 };

  #state: State = 'created';
  #stopping: Promise<void> | null = null;
  #scheduling = false;
  #again = false;
  readonly #counts = { completed: 0, skipped: 0, failed: 0, cancelled: 0, dropped: 0, refused: 0 };

  constructor(options: InputSchedulerOptions) {
    this.#runner = options.runner;
    this.#limits = options.limits;
    this.#log = options.log;
    this.#clock = options.clock ?? systemClock;
    this.#stopTimeoutMs = options.stopTimeoutMs ?? 5000;
    this.#maxDepth = Math.max(1, Math.min(MAX_SUSPEND_DEPTH, options.maxSuspendDepth ?? MAX_SUSPEND_DEPTH));
    this.#newTaskId = options.newTaskId ?? randomUUID;
  }

  /** Starts dispatching. Inputs submitted before start wait in their queues. */
  async start(_signal?: AbortSignal): Promise<void> {
    if (this.#state === 'stopping') await this.#stopping;
    this.#state = 'running';
    this.#schedule();
  }

  /**
   * Cancels every queued input, aborts the running and suspended tasks and waits (at most
   * `stopTimeoutMs`) for them to return; a task still busy after that gets its 'cancelled'
   * receipt anyway, so every submit() promise settles.
   */
  stop(): Promise<void> {
    if (this.#stopping) return this.#stopping;
    if (this.#state === 'stopped') return Promise.resolve();
    this.#state = 'stopping';
    this.#stopping = this.#shutdown().finally(() => {
      this.#state = 'stopped';
      this.#stopping = null;
    });
    return this.#stopping;
  }

  /** Queues one input; the promise resolves with its one terminal receipt and never rejects. */
  submit(input: InputEvent, options: SubmitOptions = { origin: 'external' }): Promise<Receipt> {
    return new Promise<Receipt>((resolve) => {
      const problem = invalidReason(input);
      const id = problem === undefined ? input.id : typeof input?.id === 'string' ? input.id : '';
      // Only built-in code may raise a critical interrupt; everyone else is heard at most as interactive.
      const level = problem === undefined ? (input.level === 4 && options.origin !== 'builtin' ? 3 : input.level) : 0;
      const entry: Entry = { input: problem === undefined ? { ...input, level } : input, level, resolve, settled: false };
      if (problem !== undefined) {
        this.#fail(entry, 'HA_ERR_INPUT_INVALID', problem);
        return;
      }
      if (this.#state === 'stopping' || this.#state === 'stopped') {
        this.#cancel(entry, 'shutdown');
        return;
      }
      const limits = this.#readLimits();
      const now = this.#clock.monotonic();
      const key = limits.dedupe_window_ms > 0 ? dedupeKey(entry.input) : undefined;
      if (key !== undefined && this.#dedupe.isDuplicate(key, now, limits.dedupe_window_ms)) {
        this.#settle(entry, { status: 'skipped', reason: 'duplicate' });
        return;
      }
      if (level === 0 && this.#ready.length >= limits.ready_queue_size) {
        this.#counts.refused++;
        this.#log.warn({ input_id: id, source: input.source, size: limits.ready_queue_size }, 'ready queue full: input refused');
        this.#fail(entry, 'HA_ERR_INPUT_QUEUE_FULL', `the input queue is full (${limits.ready_queue_size} waiting)`);
        return;
      }
      // Only accepted inputs open a dedupe window, so a refused input may be retried at once; the
      // window stays open while the input waits or runs and after it succeeded (see #settle).
      if (key !== undefined) {
        this.#dedupe.record(key, now, entry);
        entry.dedupe = key;
      }
      if (level === 0) {
        this.#ready.push(entry);
      } else {
        this.#interrupts[level].push(entry);
        this.#interruptCount++;
        this.#trimInterrupts(limits.interrupt_queue_size);
      }
      this.#log.debug({ input_id: id, source: input.source, level }, 'input queued');
      this.#schedule();
    });
  }

  /**
   * Cancels the running or suspended task of one input (a voice turn whose listener spoke over
   * it: barge-in), as stop() cancels every task: its LLM request is aborted at once and its next
   * safe point rejects, so it unwinds and its receipt says `cancelled` with `reason`. Tool
   * execution already under way finishes (a critical section is never torn). False when no task
   * of that input is running or suspended. `plugin`: only an input that plugin injected.
   */
  cancelRunning(inputId: string, reason: string, plugin?: string): boolean {
    const task = [this.#running, ...this.#suspended].find(
      (t) => t !== null && !t.done && t.entry.input.id === inputId && (plugin === undefined || t.entry.input.meta?.plugin === plugin),
    );
    if (!task || task.cancel.signal.aborted) return false;
    const error = new HomeAgentError('HA_ERR_ABORTED', `the task was cancelled: ${reason}`);
    task.cancelReason = reason;
    task.cancel.abort(error);
    task.llm?.abort(error);
    const resume = task.resume;
    task.resume = null;
    resume?.reject(error);
    this.#log.info({ task_id: task.id, input_id: inputId, reason }, 'task cancelled');
    return true;
  }

  /** The limits for this submit; a throwing or nonsensical source keeps the last good values (a receipt must still come). */
  #readLimits(): SchedulerLimits {
    try {
      const limits = this.#limits();
      const ok = (n: unknown, min: number) => typeof n === 'number' && Number.isFinite(n) && n >= min;
      if (ok(limits.dedupe_window_ms, 0) && ok(limits.ready_queue_size, 1) && ok(limits.interrupt_queue_size, 1)) this.#lastLimits = limits;
      else this.#log.error({ limits }, 'scheduler limits out of range; keeping the previous ones');
    } catch (error) {
      this.#log.error({ err: error }, 'reading the scheduler limits failed; keeping the previous ones');
    }
    return this.#lastLimits;
  }

  stats(): SchedulerStats {
    const running = this.#running;
    return {
      queued: this.#ready.length,
      interrupts_by_level: {
        1: this.#interrupts[1].length,
        2: this.#interrupts[2].length,
        3: this.#interrupts[3].length,
        4: this.#interrupts[4].length,
      },
      suspended: this.#suspended.length,
      running: running
        ? { task_id: running.id, input_id: running.entry.input.id, level: running.entry.level, effective_level: running.effectiveLevel }
        : null,
      ...this.#counts,
    };
  }

  // ---- queue bounds ----

  /** Over the bound: drop the oldest input of the lowest level present (possibly the new one). */
  #trimInterrupts(size: number): void {
    while (this.#interruptCount > Math.max(1, size)) {
      const level = INTERRUPT_LEVELS.findLast((l) => this.#interrupts[l].length > 0);
      if (level === undefined) return;
      const victim = this.#interrupts[level].shift();
      this.#interruptCount--;
      if (!victim) return;
      this.#counts.dropped++;
      this.#log.warn(
        { input_id: victim.input.id, source: victim.input.source, level },
        'interrupt queue full: oldest lowest-level input dropped',
      );
      this.#settle(victim, {
        status: 'cancelled',
        reason: 'dropped',
        error: { code: 'HA_ERR_INPUT_DROPPED', message: `dropped: the interrupt queue is full (${size} waiting)` },
      });
    }
  }

  #highestInterruptLevel(): 0 | InterruptLevel {
    return INTERRUPT_LEVELS.find((l) => this.#interrupts[l].length > 0) ?? 0;
  }

  #takeInterrupt(): Entry | undefined {
    const level = this.#highestInterruptLevel();
    if (level === 0) return undefined;
    this.#interruptCount--;
    return this.#interrupts[level].shift();
  }

  // ---- the pick loop ----

  /** Re-entrant calls (a receipt handler submitting, a task ending synchronously) just ask for one more pass. */
  #schedule(): void {
    if (this.#scheduling) {
      this.#again = true;
      return;
    }
    this.#scheduling = true;
    try {
      do {
        this.#again = false;
        this.#step();
      } while (this.#again);
    } finally {
      this.#scheduling = false;
    }
  }

  #step(): void {
    if (this.#state !== 'running') return;
    const running = this.#running;
    if (running) {
      // An LLM request would only be thrown away at the next safe point: abort it now.
      if (running.llm && !running.llm.signal.aborted && this.#shouldPreempt(running)) running.llm.abort(preemptedError());
      return;
    }
    if (this.#immediate) {
      const entry = this.#immediate;
      this.#immediate = null;
      this.#startTask(entry);
      return;
    }
    const head = this.#highestInterruptLevel();
    const top = this.#suspended.at(-1);
    if (top && (head === 0 || top.effectiveLevel >= head)) {
      this.#suspended.pop();
      this.#running = top;
      this.#log.debug({ task_id: top.id, level: top.entry.level }, 'task resumed');
      const resume = top.resume;
      top.resume = null;
      resume?.resolve();
      return;
    }
    const next = head !== 0 ? this.#takeInterrupt() : this.#ready.shift();
    if (next) this.#startTask(next);
  }

  #shouldPreempt(task: Task): boolean {
    return (
      this.#state === 'running' &&
      this.#running === task &&
      task.criticalDepth === 0 &&
      this.#suspended.length < this.#maxDepth &&
      this.#highestInterruptLevel() > task.effectiveLevel
    );
  }

  #startTask(entry: Entry): void {
    const task = new Task(this.#newTaskId(), entry);
    this.#running = task;
    this.#log.debug({ task_id: task.id, input_id: entry.input.id, level: entry.level }, 'task started');
    const control: TaskControl = {
      task_id: task.id,
      signal: task.cancel.signal,
      safePoint: () => this.#safePoint(task),
      llmSignal: () => this.#llmSignal(task),
      critical: <T>(fn: () => Promise<T>) => this.#critical(task, fn),
    };
    // Started from a microtask so a runner that throws synchronously still ends in a receipt.
    Promise.resolve()
      .then(() => this.#runner.run(entry.input, control))
      .then(
        (result) => this.#taskEnded(task, { result }),
        (error: unknown) => this.#taskEnded(task, { error }),
      );
  }

  // ---- TaskControl ----

  #safePoint(task: Task): Promise<void> {
    if (task.cancel.signal.aborted) return Promise.reject(abortedError());
    // A second call while already suspended (not awaited the first time) waits for the same resume.
    if (task.resume) return task.resume.promise;
    // The step is over: the next llmSignal() belongs to a new (or re-sent) request.
    task.llm = null;
    if (!this.#shouldPreempt(task)) return Promise.resolve();
    const pre = this.#takeInterrupt();
    if (!pre) return Promise.resolve();
    task.preemptCount++;
    task.resume = deferred();
    this.#suspended.push(task);
    this.#running = null;
    this.#immediate = pre;
    this.#log.debug({ task_id: task.id, by: pre.input.id, by_level: pre.level, depth: this.#suspended.length }, 'task suspended');
    const resumed = task.resume.promise;
    this.#schedule();
    return resumed;
  }

  #llmSignal(task: Task): AbortSignal {
    if (!task.llm) {
      task.llm = new AbortController();
      if (task.cancel.signal.aborted) task.llm.abort(abortedError());
      // A pre-emption already waiting: the request should not even start.
      else if (this.#shouldPreempt(task)) task.llm.abort(preemptedError());
    }
    return task.llm.signal;
  }

  async #critical<T>(task: Task, fn: () => Promise<T>): Promise<T> {
    task.criticalDepth++;
    try {
      return await fn();
    } finally {
      task.criticalDepth--;
      // A pre-emption that arrived meanwhile may now abort the current LLM request.
      if (task.criticalDepth === 0) this.#schedule();
    }
  }

  // ---- endings ----

  #taskEnded(task: Task, outcome: { result: TaskResult } | { error: unknown }): void {
    if (task.done) return;
    task.done = true;
    task.llm = null;
    if (this.#running === task) this.#running = null;
    // A runner that returned without awaiting its safe point is still on the stack.
    this.#suspended = this.#suspended.filter((t) => t !== task);
    task.resume = null;
    const text = 'result' in outcome && typeof outcome.result?.text === 'string' ? { text: outcome.result.text } : {};
    if (task.cancel.signal.aborted) {
      this.#settle(task.entry, {
        status: 'cancelled',
        reason: task.cancelReason ?? 'shutdown',
        ...text,
        error: 'error' in outcome ? toErrorEnvelope(outcome.error) : { code: 'HA_ERR_ABORTED', message: abortedError().message },
      });
    } else if ('error' in outcome) {
      this.#log.warn({ task_id: task.id, input_id: task.entry.input.id, err: outcome.error }, 'task failed');
      this.#settle(task.entry, { status: 'failed', error: toErrorEnvelope(outcome.error) });
    } else {
      const usage = 'result' in outcome && outcome.result?.usage ? { usage: outcome.result.usage } : {};
      this.#settle(task.entry, { status: 'done', ...text, ...usage }, 'result' in outcome && outcome.result?.failed === true);
    }
    task.ended.resolve();
    this.#schedule();
  }

  async #shutdown(): Promise<void> {
    const queued: Entry[] = [];
    if (this.#immediate) queued.push(this.#immediate);
    this.#immediate = null;
    for (const level of INTERRUPT_LEVELS) queued.push(...this.#interrupts[level].drain());
    this.#interruptCount = 0;
    queued.push(...this.#ready.drain());
    for (const entry of queued) this.#cancel(entry, 'shutdown');

    const tasks = [...(this.#running ? [this.#running] : []), ...this.#suspended];
    for (const task of tasks) {
      const reason = abortedError();
      task.cancel.abort(reason);
      task.llm?.abort(reason);
      // A suspended task wakes up to find its safe point failing, so it unwinds instead of continuing.
      const resume = task.resume;
      task.resume = null;
      resume?.reject(reason);
    }
    if (tasks.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#stopTimeoutMs);
      });
      await Promise.race([Promise.all(tasks.map((t) => t.ended.promise)), timeout]);
      clearTimeout(timer);
    }
    for (const task of tasks) {
      if (task.done) continue;
      task.done = true;
      this.#log.warn({ task_id: task.id, input_id: task.entry.input.id }, 'task did not stop in time; answered as cancelled');
      this.#settle(task.entry, {
        status: 'cancelled',
        reason: 'shutdown',
        error: { code: 'HA_ERR_ABORTED', message: `the task did not stop within ${this.#stopTimeoutMs} ms of shutdown` },
      });
    }
    this.#running = null;
    this.#suspended = [];
  }

  #cancel(entry: Entry, reason: string): void {
    this.#settle(entry, { status: 'cancelled', reason, error: { code: 'HA_ERR_ABORTED', message: abortedError().message } });
  }

  #fail(entry: Entry, code: ErrorCode, message: string): void {
    this.#settle(entry, { status: 'failed', error: { code, message } });
  }

  /**
   * The one place a receipt is given: later attempts for the same input are ignored. An input that
   * did not succeed (failed, cancelled, dropped, or done with `failed` set) releases its dedupe key,
   * so the person's retry runs instead of being skipped as a duplicate of the attempt that failed.
   */
  #settle(entry: Entry, receipt: Omit<Receipt, 'input_id' | 'finished_at'>, unsuccessful = false): void {
    if (entry.settled) return;
    entry.settled = true;
    if (entry.dedupe !== undefined && (receipt.status !== 'done' || unsuccessful)) this.#dedupe.forget(entry.dedupe, entry);
    if (receipt.status === 'done') this.#counts.completed++;
    else this.#counts[receipt.status]++;
    const id = typeof entry.input?.id === 'string' ? entry.input.id : '';
    entry.resolve({ input_id: id, ...receipt, finished_at: this.#clock.now() });
  }
}

function abortedError(): HomeAgentError {
  return new HomeAgentError('HA_ERR_ABORTED', 'the task was cancelled because the scheduler is stopping');
}

function preemptedError(): HomeAgentError {
  return new HomeAgentError('HA_ERR_LLM_ABORTED', 'the LLM request was cancelled by a higher-level input; re-send it after the safe point');
}

/** Why an input cannot be accepted, or undefined. Inputs come from plugins, so nothing is assumed. */
function invalidReason(input: InputEvent | undefined): string | undefined {
  if (typeof input !== 'object' || input === null) return 'the input is not an object';
  if (typeof input.id !== 'string' || input.id === '') return 'id must be a non-empty string';
  if (typeof input.source !== 'string' || input.source === '') return 'source must be a non-empty string';
  if (typeof input.channel !== 'string' || input.channel === '') return 'channel must be a non-empty string';
  if (!INPUT_TYPES.has(input.type)) return `type must be one of ${[...INPUT_TYPES].join(', ')}`;
  if (!Number.isInteger(input.level) || input.level < 0 || input.level > 4) return 'level must be an integer from 0 to 4';
  if (typeof input.meta !== 'object' || input.meta === null) return 'meta must be an object';
  return undefined;
}
