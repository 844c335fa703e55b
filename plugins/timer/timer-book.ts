/**
 * The pending timers and what can be done to them (set, pause, resume, adjust, cancel), with no
 * files and no JS timers: the plugin persists and arms around it. Kept pure over an injected
 * clock so that every change of the remaining time is tested to the millisecond. Refusals are
 * ToolErrors because each one answers a tool call the model (or the intent engine) made.
 */
import { randomBytes } from 'node:crypto';
import { ToolError, type Trust } from '../../src/sdk/index.js';
import { isPaused, type PausedTimer, type RunningTimer, type StoredTimer } from './timer-file.js';

export interface NewTimer {
  message: string;
  name?: string;
  duration_ms: number;
  source: string;
  channel: string;
  trust: Trust;
}

const LIST_HINT = 'timer_list shows the pending timers and their ids; a timer that already rang is gone';

export class TimerBook {
  readonly #now: () => number;
  readonly #timers = new Map<string, StoredTimer>();

  constructor(now: () => number, timers: Iterable<StoredTimer> = []) {
    this.#now = now;
    for (const timer of timers) this.#timers.set(timer.id, timer);
  }

  get size(): number {
    return this.#timers.size;
  }

  /** Every timer, in the order they were set (what is written to the file). */
  all(): StoredTimer[] {
    return [...this.#timers.values()];
  }

  /** Every timer, the one with the least time left first. */
  byRemaining(): StoredTimer[] {
    return this.all().sort((a, b) => this.remainingMs(a) - this.remainingMs(b));
  }

  /** Time left until it rings; never negative (an overdue timer is about to ring). */
  remainingMs(timer: StoredTimer): number {
    return isPaused(timer) ? timer.remaining_ms : Math.max(0, timer.fires_at - this.#now());
  }

  /** The running timers whose time has come. */
  due(): RunningTimer[] {
    const now = this.#now();
    return this.all().filter((timer): timer is RunningTimer => !isPaused(timer) && timer.fires_at <= now);
  }

  find(id: string): StoredTimer | undefined {
    return this.#timers.get(id);
  }

  /** The timer with this id, or a not_found refusal. */
  get(id: string): StoredTimer {
    const timer = this.#timers.get(id);
    if (!timer)
      throw new ToolError({
        reason: 'not_found',
        field: 'id',
        detail: `no pending timer has the id ${JSON.stringify(id)}`,
        hint: LIST_HINT,
      });
    return timer;
  }

  add(fields: NewTimer): RunningTimer {
    const now = this.#now();
    const timer: RunningTimer = {
      id: this.#newId(),
      message: fields.message,
      ...(fields.name === undefined ? {} : { name: fields.name }),
      duration_ms: fields.duration_ms,
      set_at: now,
      source: fields.source,
      channel: fields.channel,
      trust: fields.trust,
      fires_at: now + fields.duration_ms,
    };
    this.#timers.set(timer.id, timer);
    return timer;
  }

  /** Takes the timer out of the book (cancelled, or ringing now). */
  remove(id: string): StoredTimer {
    const timer = this.get(id);
    this.#timers.delete(id);
    return timer;
  }

  /** Takes every timer out of the book. */
  clear(): StoredTimer[] {
    const timers = this.all();
    this.#timers.clear();
    return timers;
  }

  pause(id: string): PausedTimer {
    const timer = this.get(id);
    if (isPaused(timer)) {
      throw new ToolError({
        reason: 'rejected',
        field: 'id',
        detail: `timer ${id} is already paused`,
        hint: 'timer_resume starts it again',
      });
    }
    return this.#replace({ ...fieldsOf(timer), remaining_ms: this.remainingMs(timer) });
  }

  resume(id: string): RunningTimer {
    const timer = this.get(id);
    if (!isPaused(timer)) {
      throw new ToolError({
        reason: 'rejected',
        field: 'id',
        detail: `timer ${id} is not paused; it is running`,
        hint: 'only a timer paused with timer_pause can be resumed',
      });
    }
    return this.#replace({ ...fieldsOf(timer), fires_at: this.#now() + timer.remaining_ms });
  }

  /**
   * Adds `deltaMs` (negative: takes away) to the time left, of a paused timer too. The time left
   * may not pass `maxRemainingMs`; taking away more than is left makes a running timer that is
   * due now, which the caller rings.
   */
  adjust(id: string, deltaMs: number, maxRemainingMs: number): StoredTimer {
    const timer = this.get(id);
    const before = this.remainingMs(timer);
    const after = before + deltaMs;
    if (after > maxRemainingMs) {
      throw new ToolError({
        reason: 'range',
        field: 'seconds',
        detail: `timer ${id} would then have ${Math.round(after / 1000)} s left, more than the longest a timer may run (${Math.round(maxRemainingMs / 1000)} s)`,
        hint: 'add less time, or set a new timer later',
      });
    }
    const fields = fieldsOf(timer);
    const left = Math.max(0, after);
    // The set length moves with the time left, so "how long was it" stays elapsed + left.
    fields.duration_ms = Math.max(0, timer.duration_ms + (left - before));
    if (left === 0) return this.#replace({ ...fields, fires_at: this.#now() });
    return this.#replace(isPaused(timer) ? { ...fields, remaining_ms: left } : { ...fields, fires_at: this.#now() + left });
  }

  #replace<T extends StoredTimer>(timer: T): T {
    this.#timers.set(timer.id, timer);
    return timer;
  }

  #newId(): string {
    let id: string;
    do id = `t${randomBytes(3).toString('hex')}`;
    while (this.#timers.has(id));
    return id;
  }
}

/** The timer without its running or paused state, to build the other state from. */
function fieldsOf(timer: StoredTimer): Omit<RunningTimer, 'fires_at'> {
  const { id, message, name, duration_ms, set_at, source, channel, trust } = timer;
  return { id, message, ...(name === undefined ? {} : { name }), duration_ms, set_at, source, channel, trust };
}
