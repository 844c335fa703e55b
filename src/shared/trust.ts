/**
 * Who sent an input, and so what it may cause (docs/security.md). Trust is decided by the
 * transport that carried the input, never by what the input says:
 *
 * - `owner`: proven by the transport: the CLI socket (only the owner's accounts can open it), a
 *   web session or API key, a chat id listed as an owner.
 * - `household`: someone or something of the house, not proven to be the owner: a voice in the
 *   room, a button, a known chat contact, an automation, a timer, the memory's own upkeep.
 * - `untrusted`: anything anyone could have written: MQTT payloads, webhooks, group chats,
 *   external plugins, and everything a tool returned (web pages, files, program output).
 *
 * A turn's trust is the lowest trust of what entered it; only an owner input approves a dangerous
 * action.
 */
import { type InputSender, TRUST_LEVELS, type Trust, type TurnTrust } from '../api/trust.js';

export { type InputSender, TRUST_LEVELS, type Trust, type TurnTrust };

/** Lowers a turn's trust because `what` entered it (`the output of files_read`). */
export function lowerTurnTrust(turn: TurnTrust, to: Trust, what: string): void {
  if (to === 'owner') return;
  turn.level = lowerTrust(turn.level, to);
  if (!turn.lowered_by.includes(what)) turn.lowered_by.push(what);
}

/** The sender of inputs no transport vouched for: what an input gets when its plugin said nothing. */
export const UNKNOWN_SENDER: InputSender = { trust: 'untrusted', id: 'unknown', proof: 'no transport vouched for it' };

export function isTrust(value: unknown): value is Trust {
  return typeof value === 'string' && (TRUST_LEVELS as readonly string[]).includes(value);
}

/** The lower of two trust levels. */
export function lowerTrust(a: Trust, b: Trust): Trust {
  return TRUST_LEVELS.indexOf(a) <= TRUST_LEVELS.indexOf(b) ? a : b;
}

/** True when `trust` is `minimum` or higher. */
export function trustAtLeast(trust: Trust, minimum: Trust): boolean {
  return TRUST_LEVELS.indexOf(trust) >= TRUST_LEVELS.indexOf(minimum);
}
