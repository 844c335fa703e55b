/**
 * The owner's confirmation for dangerous tools. A `dangerous` call that is not pre-authorised
 * (core.agent.preauthorized_tools) does not run: the gate records it under a random code, the
 * model is told it awaits confirmation (without the code), and the kernel itself, not the model,
 * tells the person on the channel the request came from exactly what would run and how to confirm.
 * Only an input on that same channel and from that same source carrying `/confirm <code>` runs it.
 *
 * So instructions hidden in tool output, web pages or MQTT payloads can make the model *ask* for a
 * dangerous action, but never run one: the model never sees the code, and the confirmation has to
 * come from the person's own conversation.
 */
import { randomInt } from 'node:crypto';
import type { InputEvent } from '../io/types.js';
import type { ToolCall } from '../llm/spec/index.js';
import { matchesToolName, type ToolDefinition } from '../shared/tool.js';

/** Letters and digits that cannot be mistaken for each other when read aloud or typed. */
const CODE_ALPHABET = 'ACDEFGHJKMNPQRTUVWXY34679';
const CODE_LENGTH = 6;
/** Pending confirmations kept at most; the oldest is forgotten first. */
export const MAX_PENDING_CONFIRMATIONS = 32;
/** Arguments longer than this are cut in the request the person reads. */
const MAX_SHOWN_ARGUMENT_CHARS = 800;
/** `/confirm K7QX2M`, `confirm K7QX2M`, `确认 K7QX2M`. */
const CONFIRM_INPUT = /^\s*\/?(?:confirm|确认)\s*[:：]?\s*([A-Za-z0-9]{6})\s*[.!。]?\s*$/i;

export interface PendingConfirmation {
  code: string;
  tool: string;
  call: ToolCall;
  task_id: string;
  source: string;
  channel: string;
  created_at: number;
  expires_at: number;
}

export type GateVerdict = { allowed: true; preauthorized: boolean } | { allowed: false; pending: PendingConfirmation };

export type ConfirmationMatch = { kind: 'none' } | { kind: 'confirmed'; pending: PendingConfirmation } | { kind: 'refused'; text: string };

export interface ConfirmationGateOptions {
  /** Tool-name patterns (`*` wildcard) that run without asking. */
  preauthorized: () => readonly string[];
  ttlMs: () => number;
  now: () => number;
}

export class ConfirmationGate {
  readonly #options: ConfirmationGateOptions;
  readonly #pending = new Map<string, PendingConfirmation>();

  constructor(options: ConfirmationGateOptions) {
    this.#options = options;
  }

  /** Decides whether a validated call may run now. Tools below `dangerous` always may. */
  check(definition: ToolDefinition, call: ToolCall, input: InputEvent, taskId: string): GateVerdict {
    if (definition.tier !== 'dangerous') return { allowed: true, preauthorized: false };
    if (matchesToolName(definition.name, this.#options.preauthorized())) return { allowed: true, preauthorized: true };
    this.#expire();
    const now = this.#options.now();
    const pending: PendingConfirmation = {
      code: this.#newCode(),
      tool: definition.name,
      call,
      task_id: taskId,
      source: input.source,
      channel: input.channel,
      created_at: now,
      expires_at: now + this.#options.ttlMs(),
    };
    this.#pending.set(pending.code, pending);
    while (this.#pending.size > MAX_PENDING_CONFIRMATIONS) {
      const oldest = this.#pending.keys().next().value;
      if (oldest === undefined) break;
      this.#pending.delete(oldest);
    }
    return { allowed: false, pending };
  }

  /** The confirmations the task asked for, oldest first. */
  requestedBy(taskId: string): PendingConfirmation[] {
    return [...this.#pending.values()].filter((p) => p.task_id === taskId);
  }

  /**
   * Checks whether an input is a confirmation. A matching code is consumed (it runs once). A code
   * that is unknown, expired, or comes from another channel or source is refused with a reason.
   */
  match(input: InputEvent): ConfirmationMatch {
    if (typeof input.payload !== 'string') return { kind: 'none' };
    const found = CONFIRM_INPUT.exec(input.payload);
    if (!found?.[1]) return { kind: 'none' };
    this.#expire();
    const code = found[1].toUpperCase();
    const pending = this.#pending.get(code);
    if (!pending)
      return { kind: 'refused', text: `There is no pending action with the code ${code} (it may have expired). Nothing was run.` };
    if (pending.channel !== input.channel || pending.source !== input.source) {
      return { kind: 'refused', text: `The code ${code} was issued for another conversation; confirm it there. Nothing was run.` };
    }
    this.#pending.delete(code);
    return { kind: 'confirmed', pending };
  }

  /** What the person is shown: the exact tool and arguments, and how to confirm. */
  requestText(pending: PendingConfirmation): string {
    const minutes = Math.max(1, Math.round((pending.expires_at - pending.created_at) / 60000));
    const args = pending.call.arguments || '{}';
    const shown = args.length > MAX_SHOWN_ARGUMENT_CHARS ? `${args.slice(0, MAX_SHOWN_ARGUMENT_CHARS)}… (${args.length} characters)` : args;
    return [
      `[Confirmation needed] The assistant wants to run ${pending.tool} with ${shown}.`,
      `Reply "/confirm ${pending.code}" within ${minutes} min to run it exactly like that; otherwise nothing happens.`,
    ].join('\n');
  }

  #expire(): void {
    const now = this.#options.now();
    for (const [code, p] of this.#pending) if (p.expires_at <= now) this.#pending.delete(code);
  }

  #newCode(): string {
    for (;;) {
      let code = '';
      for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
      if (!this.#pending.has(code)) return code;
    }
  }
}
