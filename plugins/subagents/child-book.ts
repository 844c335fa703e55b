/**
 * The children a daemon knows of: running ones with the controller that stops them, and the last
 * plugin.subagents.keep_finished finished ones for child_result. In memory only: a restart ends
 * every child (its turn was in this process), so nothing is kept that could claim otherwise.
 */
import type { ChildEnd, ChildState } from './child-texts.js';

export interface ChildRecord {
  id: string;
  task: string;
  state: ChildState;
  ended_by?: ChildEnd;
  max_turns: number;
  /** The conversation that spawned it, told when it ends. */
  source: string;
  channel: string;
  started_at: number;
  finished_at?: number;
  /** The child's answer (cut to plugin.subagents.max_result_chars). */
  result?: string;
  error?: string;
  tokens: number;
  tool_rounds: number;
  tool_calls: number;
  awaiting_approval: string[];
  /** Where the end notice went (the later-delivery target's sentence), once sent. */
  told?: string;
}

interface Running {
  record: ChildRecord;
  controller: AbortController;
  done: Promise<void>;
}

export class ChildBook {
  readonly #running = new Map<string, Running>();
  readonly #finished = new Map<string, ChildRecord>();

  get runningCount(): number {
    return this.#running.size;
  }

  get finishedCount(): number {
    return this.#finished.size;
  }

  has(id: string): boolean {
    return this.#running.has(id) || this.#finished.has(id);
  }

  add(record: ChildRecord, controller: AbortController, done: Promise<void>): void {
    this.#running.set(record.id, { record, controller, done });
  }

  /** Moves a child to the finished ones, forgetting the oldest beyond `keep`. */
  finish(id: string, keep: number): ChildRecord | undefined {
    const running = this.#running.get(id);
    if (!running) return undefined;
    this.#running.delete(id);
    this.#finished.set(id, running.record);
    for (const oldest of this.#finished.keys()) {
      if (this.#finished.size <= keep) break;
      this.#finished.delete(oldest);
    }
    return running.record;
  }

  get(id: string): ChildRecord | undefined {
    return this.#running.get(id)?.record ?? this.#finished.get(id);
  }

  /** Running first (oldest first), then finished (newest first). */
  list(): ChildRecord[] {
    return [...[...this.#running.values()].map((r) => r.record), ...[...this.#finished.values()].reverse()];
  }

  /** Aborts every running child with `reason` and resolves when each has ended. */
  async abortAll(reason: unknown): Promise<void> {
    const running = [...this.#running.values()];
    for (const child of running) child.controller.abort(reason);
    await Promise.allSettled(running.map((child) => child.done));
  }

  clear(): void {
    this.#finished.clear();
  }
}
