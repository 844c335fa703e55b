/**
 * Who may talk to the agent through QQ, and as whom. Owners and allowed users in private; anyone in
 * an allowed group, when the message @-mentions the bot (require_at_in_groups). The sender each
 * input carries tells the kernel what it may cause (docs/security.md): an owner's QQ id is the
 * owner, also in a group (where the conversation is shared, so approval codes go to the owner's
 * private chat instead); an allowed user is household; anyone else in a group is untrusted. Only
 * owner inputs approve dangerous actions: the kernel refuses a `/confirm` from anyone else. People
 * not allowed get at most one short refusal per hour in private and silence in groups (a bot that
 * answers everyone in a group it was added to would be spam).
 */
import type { InputSender } from '../../src/sdk/index.js';
import type { OnebotSettings } from './settings-schema.js';

export const REFUSAL_INTERVAL_MS = 3_600_000;
/** People remembered for refusals at most; the oldest is forgotten first. */
const MAX_REFUSED = 10_000;

/** The settings the access policy reads (settings-schema.ts declares them). */
export type PolicySettings = Pick<OnebotSettings, 'owners' | 'allow_users' | 'allow_groups' | 'require_at_in_groups' | 'refuse_reply'>;

export type Verdict =
  | { kind: 'accept' }
  /** Answer with this text (rate limited already). */
  | { kind: 'refuse'; text: string }
  | { kind: 'ignore'; reason: string };

export const REFUSAL_TEXT = 'Sorry, I only talk with members of this household. Ask an owner to add you.';

export class AccessPolicy {
  readonly #settings: () => PolicySettings;
  readonly #now: () => number;
  readonly #refused = new Map<string, number>();

  constructor(settings: () => PolicySettings, now: () => number) {
    this.#settings = settings;
    this.#now = now;
  }

  isOwner(userId: number | string | undefined): boolean {
    return userId !== undefined && has(this.#settings().owners, userId);
  }

  /** Private messages from owners and allowed users; groups that are allowed. */
  userAllowed(userId: number | string): boolean {
    return this.isOwner(userId) || has(this.#settings().allow_users, userId);
  }

  groupAllowed(groupId: number | string): boolean {
    return has(this.#settings().allow_groups, groupId);
  }

  /** Decides a message: `mentioned` says whether it @-mentions the bot, `text` is what the agent would read. */
  decide(message: { type: 'private' | 'group'; user_id: number; group_id?: number; mentioned: boolean; text: string }): Verdict {
    const settings = this.#settings();
    if (message.type === 'group') {
      if (message.group_id === undefined || !this.groupAllowed(message.group_id)) return { kind: 'ignore', reason: 'group not allowed' };
      if (settings.require_at_in_groups && !message.mentioned) return { kind: 'ignore', reason: 'not addressed to the bot' };
    } else if (!this.userAllowed(message.user_id)) {
      return settings.refuse_reply && this.#mayRefuse(message.user_id)
        ? { kind: 'refuse', text: REFUSAL_TEXT }
        : { kind: 'ignore', reason: 'user not allowed' };
    }
    return { kind: 'accept' };
  }

  /** Who an accepted message comes from, as the kernel weighs it. */
  senderOf(message: { type: 'private' | 'group'; user_id: number; group_id?: number }): InputSender {
    const id = `qq:${message.user_id}`;
    const shared = message.type === 'group' ? { shared: true } : {};
    if (this.isOwner(message.user_id)) return { trust: 'owner', id, proof: 'a QQ id in plugin.onebot.owners', ...shared };
    if (message.type === 'group') return { trust: 'untrusted', id, proof: `a member of QQ group ${message.group_id}`, ...shared };
    return { trust: 'household', id, proof: 'a QQ id in plugin.onebot.allow_users' };
  }

  #mayRefuse(userId: number): boolean {
    const key = String(userId);
    const now = this.#now();
    const last = this.#refused.get(key);
    if (last !== undefined && now - last < REFUSAL_INTERVAL_MS) return false;
    this.#refused.delete(key);
    this.#refused.set(key, now);
    if (this.#refused.size > MAX_REFUSED) {
      const oldest = this.#refused.keys().next().value;
      if (oldest !== undefined) this.#refused.delete(oldest);
    }
    return true;
  }
}

function has(list: readonly (string | number)[], id: number | string): boolean {
  const wanted = String(id);
  return list.some((entry) => String(entry) === wanted);
}
