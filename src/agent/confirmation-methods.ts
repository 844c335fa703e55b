/**
 * The owner's side of the approval gate as control methods (`homeagentctl confirm list|approve|deny`,
 * the web page's approvals): only owner callers may use them. An approval is the owner's input
 * `/confirm CODE` on the caller's own conversation, so it runs the held call through the same turn
 * as a typed confirmation (hooks, audit, change tracking) and answers with that turn's receipt.
 * While anything waits, the daemon's status carries a notice so the owner sees it in
 * `homeagentctl status` and on the web page.
 */
import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { EventBus } from '../events/event-bus.js';
import type { InputEvent, Receipt } from '../io/types.js';
import type { Clock } from '../shared/clock.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import { HomeAgentError } from '../shared/errors.js';
import type { InputSender } from '../shared/trust.js';
import type { ConfirmationGate } from './confirmation-gate.js';

/** The status notice's key while approvals wait. */
export const CONFIRMATION_NOTICE = 'agent.confirmations';
/** An approval is a person waiting at a prompt: it pre-empts queued and background work. */
const APPROVAL_LEVEL = 3;

const Code = Type.String({ pattern: '^[A-Za-z0-9]{6}$', description: 'the six-character code of the waiting action' });

export interface ConfirmationMethodsDeps {
  gate: ConfirmationGate;
  /** Queues an input for the agent and resolves with its receipt (the input scheduler's submit). */
  submit: (input: InputEvent) => Promise<Receipt>;
  /** The daemon status' notice calls. */
  notice: (message: string) => void;
  clearNotice: () => void;
  /** The sender a control caller speaks as (kernel-methods' callerSender). */
  senderOf: (caller: { actor: string; owner?: boolean; proof?: string }) => InputSender;
  audit: (record: { actor: string; action: string; [field: string]: unknown }) => void;
  events: EventBus;
  clock: Clock;
}

export function registerConfirmationMethods(control: ControlMethodRegistrar, deps: ConfirmationMethodsDeps): () => void {
  const { gate } = deps;
  control.register({
    name: 'confirm.list',
    description:
      'Dangerous tool calls waiting for the owner: code, tool, exact arguments, where the request came from and how far that turn was trusted, expiry.',
    owner_only: true,
    params: Type.Object({}),
    handler: () => ({ pending: gate.list() }),
  });
  control.register({
    name: 'confirm.approve',
    description: 'Runs a waiting dangerous call exactly as shown, as the owner; answers with the receipt of that run.',
    owner_only: true,
    params: Type.Object({ code: Code, channel: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' })) }),
    handler: async ({ code, channel }, caller) => {
      const upper = code.toUpperCase();
      const pending = gate.list().find((p) => p.code === upper);
      if (!pending) throw unknownCode(upper);
      const receipt = await deps.submit({
        id: randomUUID(),
        source: caller.actor,
        channel: channel ?? caller.actor.split(':')[0] ?? 'cli',
        sender: deps.senderOf(caller),
        type: 'text',
        payload: `/confirm ${upper}`,
        meta: { no_memory: true },
        received_at: deps.clock.now(),
        level: APPROVAL_LEVEL,
      });
      return { code: upper, tool: pending.tool, receipt };
    },
  });
  control.register({
    name: 'confirm.deny',
    description: 'Drops a waiting dangerous call: it never runs.',
    owner_only: true,
    params: Type.Object({ code: Code }),
    handler: ({ code }, caller) => {
      const pending = gate.deny(code, caller.actor);
      if (!pending) throw unknownCode(code.toUpperCase());
      deps.audit({ actor: caller.actor, action: 'confirm.deny', code: pending.code, tool: pending.tool });
      return { code: pending.code, tool: pending.tool, denied: true };
    },
  });

  // The notice follows what waits; a timer clears it when the last request expires unseen.
  let expiry: NodeJS.Timeout | undefined;
  const refresh = () => {
    clearTimeout(expiry);
    const waiting = gate.list();
    if (waiting.length === 0) {
      deps.clearNotice();
      return;
    }
    const tools = [...new Set(waiting.map((p) => p.tool))].join(', ');
    deps.notice(
      `${waiting.length} dangerous action${waiting.length === 1 ? '' : 's'} (${tools}) wait${waiting.length === 1 ? 's' : ''} for the owner's approval: homeagentctl confirm list`,
    );
    const next = gate.nextExpiry();
    if (next !== undefined) expiry = setTimeout(refresh, Math.max(0, next - deps.clock.now()) + 10).unref();
  };
  const offRequested = deps.events.on('confirmations', 'confirmation.requested', refresh);
  const offResolved = deps.events.on('confirmations', 'confirmation.resolved', refresh);
  return () => {
    offRequested();
    offResolved();
    clearTimeout(expiry);
  };
}

function unknownCode(code: string): HomeAgentError {
  return new HomeAgentError(
    'HA_ERR_CONFIRMATION_UNKNOWN',
    `no dangerous action waits under the code ${code} (it may have expired or been decided, or the daemon restarted: waiting actions are kept in memory only)`,
  );
}
