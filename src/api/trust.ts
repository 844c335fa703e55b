/**
 * The wire shape of trust: who sent an input and what a turn's trust is, as inputs, confirmations
 * and events carry them (what each level means: src/shared/trust.ts).
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
