/**
 * Test helpers for the input scheduler: deferred promises to control each runner step, a runner
 * whose behaviour is scripted per input id, a settable clock, and receipt bookkeeping.
 */
import { InputScheduler, type InputSchedulerOptions, type SchedulerLimits, type SubmitOptions } from '../../../src/io/input-scheduler.js';
import type { InputEvent, Level, Receipt, TaskControl, TaskResult } from '../../../src/io/types.js';
import type { Clock } from '../../../src/shared/clock.js';
import { OWNER } from '../../helpers/senders.js';
import { silentLogs } from '../fixtures/support.js';

export { type Deferred, deferred, settle as drain } from '../../helpers/deferred.js';

/** Resolves with the LLM answer, or 'aborted' when the signal fires first (as a provider would). */
export function llmStep(signal: AbortSignal, reply: Promise<string>): Promise<string> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve('aborted');
    signal.addEventListener('abort', () => resolve('aborted'), { once: true });
    void reply.then(resolve);
  });
}

export class ManualClock implements Clock {
  at = 1_000_000;
  now(): number {
    return this.at;
  }
  monotonic(): number {
    return this.at;
  }
}

export type Behavior = (control: TaskControl, input: InputEvent) => Promise<TaskResult>;

export interface HarnessOptions {
  limits?: Partial<SchedulerLimits>;
  clock?: Clock;
  stopTimeoutMs?: number;
  maxSuspendDepth?: number;
}

export class Harness {
  readonly scheduler: InputScheduler;
  readonly behaviors = new Map<string, Behavior>();
  /** `start <id>` when the runner is called, `receipt <id> <status>` when a receipt arrives. */
  readonly trace: string[] = [];
  readonly receipts = new Map<string, Receipt[]>();
  readonly seenInputs = new Map<string, InputEvent>();
  limits: SchedulerLimits;
  #taskIds = 0;

  constructor(options: HarnessOptions = {}) {
    this.limits = { dedupe_window_ms: 0, ready_queue_size: 256, interrupt_queue_size: 64, ...options.limits };
    const schedulerOptions: InputSchedulerOptions = {
      runner: {
        run: (input, control) => {
          this.trace.push(`start ${input.id}`);
          this.seenInputs.set(input.id, input);
          const behavior = this.behaviors.get(input.id);
          return behavior ? behavior(control, input) : Promise.resolve({ text: `answer ${input.id}` });
        },
      },
      limits: () => this.limits,
      log: silentLogs().child('scheduler'),
      newTaskId: () => `task-${++this.#taskIds}`,
    };
    if (options.clock) schedulerOptions.clock = options.clock;
    if (options.stopTimeoutMs !== undefined) schedulerOptions.stopTimeoutMs = options.stopTimeoutMs;
    if (options.maxSuspendDepth !== undefined) schedulerOptions.maxSuspendDepth = options.maxSuspendDepth;
    this.scheduler = new InputScheduler(schedulerOptions);
  }

  /** Submits and records the receipt when it comes. */
  submit(input: InputEvent, options?: SubmitOptions): Promise<Receipt> {
    const promise = options ? this.scheduler.submit(input, options) : this.scheduler.submit(input);
    return promise.then((receipt) => {
      const list = this.receipts.get(receipt.input_id) ?? [];
      list.push(receipt);
      this.receipts.set(receipt.input_id, list);
      this.trace.push(`receipt ${receipt.input_id} ${receipt.status}`);
      return receipt;
    });
  }

  /** The receipt-only part of the trace. */
  receiptOrder(): string[] {
    return this.trace.filter((line) => line.startsWith('receipt '));
  }
}

let inputCounter = 0;

export function input(id: string, level: Level = 0, extra: Partial<InputEvent> = {}): InputEvent {
  inputCounter++;
  return {
    id,
    source: 'cli',
    channel: 'cli',
    sender: OWNER,
    type: 'text',
    // Unique payloads by default so dedupe never interferes unless a test wants it to.
    payload: `text of ${id} #${inputCounter}`,
    meta: {},
    received_at: 0,
    level,
    ...extra,
  };
}
