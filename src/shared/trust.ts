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

export const TRUST_LEVELS = ['untrusted', 'household', 'owner'] as const;
export type Trust = (typeof TRUST_LEVELS)[number];

/** Who sent an input and how the transport established it. */
export interface InputSender {
  trust: Trust;
  /** The sender as the transport knows it: `cli`, `webui:admin`, `qq:12345`, `mqtt`. */
  id: string;
  /** How the trust was established, shown to the owner with every approval request ("the CLI socket"). */
  proof: string;
  /**
   * Others read this conversation too (a group chat, a room's speaker): what is said there is not
   * said to the owner alone, so approval codes are never shown in it.
   */
  shared?: boolean;
}

/**
 * How far a turn may be trusted: the lowest trust of what entered it. It starts at the input's
 * sender and drops to `untrusted` once recalled memory or any tool output enters the turn: that
 * text may hold what anyone wrote.
 */
export interface TurnTrust {
  level: Trust;
  /** What entered the turn and lowered it, in order: `recalled memory`, `the output of web_fetch`. */
  lowered_by: string[];
}

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
