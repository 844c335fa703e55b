/**
 * The second guard against the send loop (the first: every send answers the model just "ok", and
 * core.agent.max_tool_turns bounds the rounds): one agent turn may send at most
 * max_sends_per_turn messages to QQ, counting output_send__qq and the qq_send_* tools together.
 * The kernel's own delivery of the final answer is not counted: there is one per turn.
 */
import { ToolError } from '../../src/sdk/index.js';

/** Turns remembered at most; the oldest is forgotten first. */
const MAX_TURNS = 256;

export class SendBudget {
  readonly #max: () => number;
  readonly #used = new Map<string, number>();

  constructor(max: () => number) {
    this.#max = max;
  }

  /** Counts one send of the turn `taskId`; throws a ToolError the model reads once the cap is reached. */
  take(taskId: string): void {
    const used = this.#used.get(taskId) ?? 0;
    const max = this.#max();
    if (used >= max) {
      throw new ToolError({
        reason: 'rejected',
        detail: `${max} QQ messages were already sent for this request; no more are sent`,
        hint: 'stop sending and end the turn with a short answer',
      });
    }
    this.#used.delete(taskId);
    this.#used.set(taskId, used + 1);
    if (this.#used.size > MAX_TURNS) {
      const oldest = this.#used.keys().next().value;
      if (oldest !== undefined) this.#used.delete(oldest);
    }
  }

  used(taskId: string): number {
    return this.#used.get(taskId) ?? 0;
  }
}
