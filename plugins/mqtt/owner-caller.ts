/**
 * Which control callers are the owner: `mqtt.publish` (any topic, HomeAgent's command topics
 * included, so past every confirmation) and `mqtt.credentials` (the broker's passwords) answer
 * only them. homeagentctl on the control socket is the owner (whoever can use that socket is the
 * machine's admin already); so is a caller the kernel marks `owner: true`, where it does.
 */
import { type Caller, HomeAgentError } from '../../src/sdk/index.js';

const OWNER_ACTOR = 'cli';

export function isOwnerCaller(caller: Caller): boolean {
  return caller.actor === OWNER_ACTOR || (caller as Caller & { owner?: unknown }).owner === true;
}

/** HA_ERR_PLUGIN_PERMISSION naming the method and the caller, unless the caller is the owner. */
export function requireOwner(caller: Caller, method: string): void {
  if (isOwnerCaller(caller)) return;
  throw new HomeAgentError(
    'HA_ERR_PLUGIN_PERMISSION',
    `${method} answers only the owner (homeagentctl on the control socket), not ${JSON.stringify(caller.actor)}`,
  );
}
