/**
 * Senders for inputs tests build by hand, one per trust level (src/shared/trust.ts): the CLI's
 * owner, a household voice, an MQTT payload.
 */
import type { InputSender } from '../../src/shared/trust.js';

export const OWNER: InputSender = { trust: 'owner', id: 'cli', proof: 'the CLI socket' };
export const HOUSEHOLD: InputSender = { trust: 'household', id: 'voice', proof: 'a voice heard through the microphone', shared: true };
export const UNTRUSTED: InputSender = { trust: 'untrusted', id: 'mqtt', proof: 'an MQTT payload' };
