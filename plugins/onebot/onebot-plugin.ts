/**
 * The onebot plugin: QQ through a OneBot v11 implementation. It wires the connection (reverse
 * server or forward client), echo-matched actions, the access policy, the `qq` output channel and
 * the qq_* tools. Accepted messages become L1 interrupts from source `qq` on the conversation
 * `qq:private:<user>` / `qq:group:<group>`, so answers come back through the `qq` channel; the
 * plugin remembers which message each input answers, for the reply segment.
 */
import { randomUUID } from 'node:crypto';
import {
  addressScope,
  CAPABILITY,
  type ConfirmationRequest,
  checkListenHost,
  HomeAgentError,
  type OutputEvent,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  ToolError,
} from '../../src/sdk/index.js';
import { ActionCaller } from './action-caller.js';
import { conversationOf, mapMessage, parseConversation, SOURCE } from './event-mapper.js';
import { ForwardClient, type LinkClock } from './forward-client.js';
import type { OneBotLink } from './link.js';
import { mediaFile, sendFile, sendMedia, sendText, type Target } from './outgoing.js';
import { ownerOnlyTools } from './owner-only-tools.js';
import { AccessPolicy } from './policy.js';
import { isActionResponse, isEvent, type OneBotEvent } from './protocol.js';
import { asToolError, qqTools } from './qq-tools.js';
import { ReverseServer } from './reverse-server.js';
import { SendBudget } from './send-budget.js';
import type { OnebotSettings } from './settings-schema.js';

export const CHANNEL = 'qq';
/** Below L2 (chat elsewhere, voice): a QQ message waits for a spoken exchange rather than cutting it off. */
export const QQ_LEVEL = 1;
/** Inputs remembered for the reply segment and the answer's target; the oldest is forgotten first. */
const MAX_REMEMBERED = 512;

const systemClock: LinkClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timeout = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(timeout) };
  },
};

export interface OnebotPluginOptions {
  clock?: LinkClock;
}

interface Answering {
  target: Target;
  message_id: number | undefined;
}

export class OnebotPlugin implements PluginInstance {
  readonly #ctx: PluginContext<OnebotSettings>;
  readonly #clock: LinkClock;
  readonly #caller: ActionCaller;
  readonly #policy: AccessPolicy;
  readonly #budget: SendBudget;
  readonly #inputs = new Map<string, Answering>();
  readonly #lastMessage = new Map<string, number>();
  readonly #unregister: Array<() => void> = [];
  #link: OneBotLink | undefined;
  #selfId: number | undefined;

  constructor(ctx: PluginContext<OnebotSettings>, options: OnebotPluginOptions = {}) {
    this.#ctx = ctx;
    this.#clock = options.clock ?? systemClock;
    this.#caller = new ActionCaller({
      send: (request) => this.#requireLink().send(request),
      timeoutMs: () => this.#ctx.settings.get('action_timeout_ms'),
      clock: this.#clock,
    });
    this.#policy = new AccessPolicy(
      () => ({
        owners: this.#ctx.settings.get('owners') ?? [],
        allow_users: this.#ctx.settings.get('allow_users') ?? [],
        allow_groups: this.#ctx.settings.get('allow_groups') ?? [],
        require_at_in_groups: this.#ctx.settings.get('require_at_in_groups') ?? true,
        refuse_reply: this.#ctx.settings.get('refuse_reply') ?? true,
      }),
      () => this.#clock.now(),
    );
    this.#budget = new SendBudget(() => this.#ctx.settings.get('max_sends_per_turn'));
  }

  /** The reverse server's bound port (0 in forward mode or before start). */
  get port(): number {
    return this.#link instanceof ReverseServer ? this.#link.port : 0;
  }

  get link(): OneBotLink | undefined {
    return this.#link;
  }

  async start(): Promise<void> {
    const link = this.#makeLink();
    const call = (action: string, params: Record<string, unknown>) => this.#caller.call(action, params);
    this.#unregister.push(
      this.#ctx.io.registerOutputChannel({
        name: CHANNEL,
        description: 'QQ messages to the person or group the request came from',
        capabilities: CAPABILITY.TEXT | CAPABILITY.FILE | CAPABILITY.IMAGE | CAPABILITY.AUDIO,
        synchronous: false,
        send: (event) => this.#send(event),
      }),
    );
    for (const tool of qqTools({
      call,
      policy: this.#policy,
      budget: this.#budget,
      maxChars: () => this.#ctx.settings.get('max_message_chars'),
    })) {
      this.#unregister.push(this.#ctx.tools.register(tool));
    }
    this.#unregister.push(
      this.#ctx.stages.register('before_toolcall', ownerOnlyTools(SOURCE)),
      this.#ctx.events.subscribe('confirmation.requested', (request) => this.#toOwners(request)),
    );
    await link.start();
    this.#link = link;
  }

  async stop(): Promise<void> {
    for (const unregister of this.#unregister.splice(0)) unregister();
    await this.#link?.stop();
    this.#link = undefined;
    this.#caller.failAll('the onebot plugin stopped');
  }

  health(): Required<PluginHealth> {
    const connected = this.#link?.connected ?? false;
    if (connected) {
      return { ok: true, detail: `connected (QQ ${this.#selfId ?? 'unknown'})`, detail_zh: `已连接（QQ ${this.#selfId ?? '未知'}）` };
    }
    // The link's problem is the connection's own text (a refused connection, a failed attempt).
    const problem = this.#link?.problem;
    return {
      ok: false,
      detail: `no OneBot implementation connected${problem ? `; ${problem}` : ''}`,
      detail_zh: `没有 OneBot 实现连上${problem ? `；${problem}` : ''}`,
    };
  }

  #requireLink(): OneBotLink {
    if (!this.#link) throw new HomeAgentError('HA_ERR_ONEBOT_CONNECTION', 'the onebot plugin is not running');
    return this.#link;
  }

  #makeLink(): OneBotLink {
    const token = this.#ctx.settings.get('access_token') ?? '';
    const handlers = {
      onFrame: (frame: unknown) => this.#onFrame(frame),
      onUp: (selfId: number | undefined) => {
        if (selfId !== undefined) this.#selfId = selfId;
      },
      onDown: (reason: string) => {
        this.#caller.failAll(reason);
        this.#ctx.log.warn({ reason }, 'OneBot connection lost');
      },
    };
    if (this.#ctx.settings.get('mode') === 'forward') {
      const url = (this.#ctx.settings.get('url') ?? '').trim();
      if (!/^wss?:\/\//i.test(url) || !URL.canParse(url)) {
        throw new HomeAgentError(
          'HA_ERR_ONEBOT_CONFIG',
          "plugin.onebot.url must be the implementation's ws:// or wss:// address in forward mode",
        );
      }
      if (token === '' && addressScope(new URL(url).hostname) !== 'loopback') {
        throw new HomeAgentError('HA_ERR_ONEBOT_CONFIG', `plugin.onebot.access_token is required: ${url} is not on this machine`);
      }
      return new ForwardClient({
        url,
        token,
        minMs: this.#ctx.settings.get('reconnect_min_ms'),
        maxMs: this.#ctx.settings.get('reconnect_max_ms'),
        handlers,
        clock: this.#clock,
        log: this.#ctx.log,
      });
    }
    const { host, scope } = checkListenHost(this.#ctx.settings.get('host'), 'plugin.onebot.host');
    if (scope !== 'loopback' && token === '') {
      throw new HomeAgentError(
        'HA_ERR_ONEBOT_CONFIG',
        `plugin.onebot.access_token is required: plugin.onebot.host ${host} is reachable from the network, and anyone reaching it could speak as QQ`,
      );
    }
    return new ReverseServer({
      host,
      port: this.#ctx.settings.get('port'),
      path: this.#ctx.settings.get('path'),
      token,
      handlers,
      log: this.#ctx.log,
    });
  }

  #onFrame(frame: unknown): void {
    if (isActionResponse(frame)) {
      if (!this.#caller.handle(frame)) this.#ctx.log.debug({ echo: frame.echo }, 'OneBot response to no pending action');
    } else if (isEvent(frame)) {
      if (typeof frame.self_id === 'number' && frame.self_id > 0) this.#selfId = frame.self_id;
      this.#onEvent(frame).catch((error) => this.#ctx.log.error({ err: error, post_type: frame.post_type }, 'OneBot event failed'));
    } else this.#ctx.log.debug({}, 'OneBot frame that is neither an event nor a response dropped');
  }

  async #onEvent(event: OneBotEvent): Promise<void> {
    if (event.post_type === 'message') return this.#onMessage(event);
    if (event.post_type === 'request') return this.#onRequest(event);
    if (event.post_type === 'notice')
      this.#ctx.log.info({ notice_type: event.notice_type, group_id: event.group_id, user_id: event.user_id }, 'QQ notice');
  }

  async #onMessage(event: OneBotEvent): Promise<void> {
    const message = mapMessage(event, this.#selfId);
    if (!message || message.user_id === this.#selfId) return;
    const verdict = this.#policy.decide(message);
    const target: Target =
      message.type === 'group' ? { type: 'group', id: message.group_id as number } : { type: 'private', id: message.user_id };
    if (verdict.kind === 'ignore') {
      this.#ctx.log.debug({ user_id: message.user_id, group_id: message.group_id, why: verdict.reason }, 'QQ message ignored');
      return;
    }
    if (verdict.kind === 'refuse') {
      this.#ctx.log.info({ user_id: message.user_id, group_id: message.group_id }, 'QQ message refused');
      await sendText(
        (a, p) => this.#caller.call(a, p),
        target,
        verdict.text,
        this.#ctx.settings.get('max_message_chars'),
        message.message_id,
      );
      return;
    }
    if (message.text === '' && message.images.length === 0) return;
    const id = randomUUID().replace(/-/g, '');
    this.#remember(id, { target, message_id: message.message_id });
    if (message.message_id !== undefined) this.#lastMessage.set(message.conversation, message.message_id);
    await this.#ctx.io.injectInterrupt(
      {
        id,
        source: SOURCE,
        channel: message.conversation,
        sender: this.#policy.senderOf(message),
        type: 'text',
        payload: message.text === '' ? '[picture]' : message.text,
        meta: {
          user_id: message.user_id,
          ...(message.group_id !== undefined ? { group_id: message.group_id } : {}),
          message_id: message.message_id,
          sender_name: message.sender_name,
          is_owner: this.#policy.isOwner(message.user_id),
          images: message.images,
        },
      },
      QQ_LEVEL,
    );
  }

  /**
   * A dangerous action asked for where the owner does not read (MQTT, a group, a voice in the room)
   * goes to each owner's private chat, code included: only an owner's answer there approves it.
   */
  async #toOwners(request: ConfirmationRequest): Promise<void> {
    if (request.inline || !this.#ctx.settings.get('approvals_to_owners') || !this.#link?.connected) return;
    for (const owner of this.#ctx.settings.get('owners') ?? []) {
      const target: Target = { type: 'private', id: Number(owner) };
      try {
        await sendText((a, p) => this.#caller.call(a, p), target, request.text, this.#ctx.settings.get('max_message_chars'), undefined);
      } catch (error) {
        this.#ctx.log.warn({ err: error, owner, code: request.code }, 'the approval request could not be sent to a QQ owner');
      }
    }
  }

  /** Friend and group requests are told to the first owner; never accepted automatically. */
  async #onRequest(event: OneBotEvent): Promise<void> {
    const owner = (this.#ctx.settings.get('owners') ?? [])[0];
    const who = String(event.user_id ?? 'someone');
    const what =
      event.request_type === 'friend'
        ? `${who} asks to become the bot's QQ friend`
        : `${who} asks ${event.sub_type === 'invite' ? 'the bot to join' : 'to join'} QQ group ${event.group_id ?? '?'}`;
    this.#ctx.log.info({ request_type: event.request_type, user_id: event.user_id, group_id: event.group_id }, 'QQ request');
    if (owner === undefined) return;
    const comment = typeof event.comment === 'string' && event.comment !== '' ? ` (message: "${event.comment.slice(0, 200)}")` : '';
    const id = randomUUID().replace(/-/g, '');
    this.#remember(id, { target: { type: 'private', id: Number(owner) }, message_id: undefined });
    await this.#ctx.io.injectInterrupt(
      {
        id,
        source: SOURCE,
        channel: conversationOf('private', owner),
        // The request's text is the stranger's own words.
        sender: { trust: 'untrusted', id: `qq:${who}`, proof: 'a QQ friend or group request' },
        type: 'text',
        payload: `[QQ request] ${what}${comment}. It was not accepted; tell the owner briefly, who can accept it in QQ.`,
        meta: { request_type: event.request_type, user_id: event.user_id, group_id: event.group_id, is_owner: false, notice: true },
      },
      QQ_LEVEL,
    );
  }

  #remember(id: string, answering: Answering): void {
    this.#inputs.set(id, answering);
    if (this.#inputs.size > MAX_REMEMBERED) {
      const oldest = this.#inputs.keys().next().value;
      if (oldest !== undefined) this.#inputs.delete(oldest);
    }
  }

  /** The `qq` output channel: the conversation of the input answered, or meta.user_id / meta.group_id from the model. */
  async #send(event: OutputEvent): Promise<void> {
    const { target, replyTo } = this.#targetOf(event);
    if (typeof event.meta.task_id === 'string') this.#budget.take(event.meta.task_id);
    const call = (action: string, params: Record<string, unknown>) => this.#caller.call(action, params);
    const payload = String(event.payload);
    try {
      if (event.type === 'text') await sendText(call, target, payload, this.#ctx.settings.get('max_message_chars'), replyTo);
      else if (event.type === 'image' || event.type === 'audio')
        await sendMedia(call, target, event.type === 'image' ? 'image' : 'record', mediaFile(payload, this.#ctx.media), replyTo);
      else if (event.type === 'file')
        await sendFile(call, target, payload, typeof event.meta.name === 'string' ? event.meta.name : undefined);
      else throw new ToolError({ reason: 'capability', field: 'type', detail: `QQ cannot carry ${event.type}` });
    } catch (error) {
      throw asToolError(error);
    }
  }

  #targetOf(event: OutputEvent): { target: Target; replyTo: number | undefined } {
    const answering = event.input_id === undefined ? undefined : this.#inputs.get(event.input_id);
    if (answering) return { target: answering.target, replyTo: answering.message_id };
    const conversation = parseConversation(event.meta.input_channel);
    if (conversation) {
      return { target: conversation, replyTo: this.#lastMessage.get(conversationOf(conversation.type, conversation.id)) };
    }
    const groupId = Number(event.meta.group_id);
    const userId = Number(event.meta.user_id);
    if (Number.isSafeInteger(groupId) && groupId > 0 && this.#policy.groupAllowed(groupId))
      return { target: { type: 'group', id: groupId }, replyTo: undefined };
    if (Number.isSafeInteger(userId) && userId > 0 && this.#policy.userAllowed(userId))
      return { target: { type: 'private', id: userId }, replyTo: undefined };
    throw new ToolError({
      reason: 'required',
      field: 'meta',
      detail:
        'this request did not come from QQ: say whom to send to with meta.user_id (an owner or allowed user) or meta.group_id (an allowed group)',
    });
  }
}
