/**
 * Who may act on the house from QQ. Everyone the policy lets talk to HomeAgent (owners, allowed
 * users, @-mentions in allowed groups) may ask and be answered, but only an owner's request may run
 * a tool that changes something (tier act or dangerous): a guest in the family group must not
 * unlock the door, start the vacuum or set the heating. Answering in the same conversation
 * (output_send__qq) stays open to everyone who may talk.
 */
import type { StageContext } from '../../src/sdk/index.js';

const ANSWERING = new Set(['output_send__qq']);

/** A before_toolcall hook: rejects acting tools in turns that came from a non-owner on QQ. */
export function ownerOnlyTools(source: string): (ctx: StageContext) => void {
  return (ctx) => {
    if (ctx.input.source !== source || ctx.input.meta.is_owner === true) return;
    const name = ctx.tool_call?.name;
    if (name === undefined || ANSWERING.has(name)) return;
    if (ctx.tool_tier === 'act' || ctx.tool_tier === 'dangerous') {
      ctx.reject = `${name} changes something, and only an owner may ask for that from QQ (plugin.onebot.owners); answer without it`;
    }
  };
}
