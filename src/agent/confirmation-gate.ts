/**
 * The owner's approval of dangerous tools (docs/security.md). A `dangerous` call runs at once only
 * when it is pre-authorised (core.agent.preauthorized_tools) AND nothing below the owner's trust
 * entered the turn; every other dangerous call is held under a random code and the model is told it
 * awaits approval (without the code). The kernel, not the model, tells the owner exactly what would
 * run and where the request came from:
 *
 * - in the requesting conversation itself when the owner asked there and nobody else reads it (the
 *   CLI, the web page, the owner's private chat);
 * - otherwise only on the owner's own channels (`confirmation.requested`: the web page, QQ owners,
 *   `homeagentctl confirm list`), never in the answer to the requester: a code is never published
 *   on a broadcast or retained medium such as MQTT's last_reply or a group chat.
 *
 * Only an owner input (`/confirm <code>`, `homeagentctl confirm approve <code>`) runs a held call;
 * `/deny <code>` drops it. An input of lower trust carrying a code is refused without saying
 * whether the code exists. So instructions in MQTT payloads, group chats, web pages or tool output
 * can make the model *ask* for a dangerous action, never run one.
 *
 * A held call keeps its real arguments to run them on approval, but shows (in the request text,
 * the pending list and the events) only what its tool lets be shown: a secret argument appears
 * as ******** (ToolDefinition.redact_arguments). Held calls live in this process's memory only,
 * never on disk: a restart drops them, and the owner is asked again when the model asks again.
 */
import { randomInt } from 'node:crypto';
import type { ConfirmationRequest, EventBus } from '../events/event-bus.js';
import type { InputEvent } from '../io/types.js';
import type { ToolCall } from '../llm/spec/index.js';
import { type Language, textLanguage } from '../shared/language.js';
import { matchesToolName, type ToolDefinition } from '../shared/tool.js';
import type { InputSender, TurnTrust } from '../shared/trust.js';
import { shownArguments } from './tool-registry.js';

/** Letters and digits that cannot be mistaken for each other when read aloud or typed. */
const CODE_ALPHABET = 'ACDEFGHJKMNPQRTUVWXY34679';
const CODE_LENGTH = 6;
/** Pending confirmations kept at most; the oldest is forgotten first. */
export const MAX_PENDING_CONFIRMATIONS = 32;
/** Arguments longer than this are cut in the request the person reads. */
const MAX_SHOWN_ARGUMENT_CHARS = 800;
/** `/confirm K7QX2M`, `confirm K7QX2M`, `确认 K7QX2M`; `/deny K7QX2M`, `拒绝 K7QX2M`. */
const DECISION_INPUT = /^\s*\/?(confirm|approve|确认|批准|deny|refuse|拒绝)\s*[:：]?\s*([A-Za-z0-9]{6})\s*[.!。！]?\s*$/i;
const DENY_WORDS = new Set(['deny', 'refuse', '拒绝']);
/** The first line of every approval request, so any channel can recognise one. */
export const REQUEST_MARKER: Record<Language, string> = { en: '[Confirmation needed]', zh: '[需要确认]' };

export interface PendingConfirmation {
  code: string;
  tool: string;
  /** The call exactly as it runs on approval: never shown, since its arguments may hold a secret. */
  call: ToolCall;
  /** The arguments as the owner is shown them (secrets masked), '{}' for none. */
  shown_arguments: string;
  task_id: string;
  /** The input of the turn that asked for it. */
  origin: { input_id: string; source: string; channel: string; sender: InputSender };
  /** The turn's trust when the call was asked for, and what had lowered it. */
  trust: TurnTrust;
  /** Shown in the requesting conversation (the owner asked, in a conversation only they read). */
  inline: boolean;
  /** The language of the request that asked for it: the owner is told in it. */
  language: Language;
  /** What the call would run, when its arguments do not show it (the tool's confirmation_detail). */
  steps?: string[];
  created_at: number;
  expires_at: number;
}

/** A pending confirmation as lists and events show it. */
export type ConfirmationSummary = ConfirmationRequest;

export type GateVerdict = { allowed: true; preauthorized: boolean } | { allowed: false; pending: PendingConfirmation };

export type ConfirmationMatch =
  | { kind: 'none' }
  | { kind: 'confirmed'; pending: PendingConfirmation }
  | { kind: 'denied'; pending: PendingConfirmation }
  | { kind: 'refused'; text: string };

export interface ConfirmationGateOptions {
  /** Tool-name patterns (`*` wildcard) that run without asking in a turn only the owner's input entered. */
  preauthorized: () => readonly string[];
  ttlMs: () => number;
  now: () => number;
  /** Where `confirmation.requested` / `confirmation.resolved` go (the owner's channels listen). */
  events?: Pick<EventBus, 'emit'>;
}

/** What the gate needs of the turn that asks. */
export interface GateTurn {
  input: InputEvent;
  task_id: string;
  trust: TurnTrust;
}

export class ConfirmationGate {
  readonly #options: ConfirmationGateOptions;
  readonly #pending = new Map<string, PendingConfirmation>();

  constructor(options: ConfirmationGateOptions) {
    this.#options = options;
  }

  /** Decides whether a validated call may run now. Tools below `dangerous` always may. */
  check(definition: ToolDefinition, call: ToolCall, turn: GateTurn): GateVerdict {
    if (definition.tier !== 'dangerous') return { allowed: true, preauthorized: false };
    if (turn.trust.level === 'owner' && matchesToolName(definition.name, this.#options.preauthorized()))
      return { allowed: true, preauthorized: true };
    this.#expire();
    const now = this.#options.now();
    const { input } = turn;
    const steps = callSteps(definition, call);
    const pending: PendingConfirmation = {
      code: this.#newCode(),
      tool: definition.name,
      call,
      shown_arguments: shownArguments(definition, call.arguments) || '{}',
      task_id: turn.task_id,
      origin: { input_id: input.id, source: input.source, channel: input.channel, sender: { ...input.sender } },
      trust: { level: turn.trust.level, lowered_by: [...turn.trust.lowered_by] },
      inline: input.sender.trust === 'owner' && input.sender.shared !== true,
      language: textLanguage(typeof input.payload === 'string' ? input.payload : ''),
      created_at: now,
      expires_at: now + this.#options.ttlMs(),
      ...(steps === undefined ? {} : { steps }),
    };
    this.#pending.set(pending.code, pending);
    while (this.#pending.size > MAX_PENDING_CONFIRMATIONS) {
      const oldest = this.#pending.values().next().value;
      if (oldest === undefined) break;
      this.#resolve(oldest, 'expired', 'kernel');
    }
    this.#options.events?.emit('confirmation.requested', this.summary(pending));
    return { allowed: false, pending };
  }

  /** The confirmations the task asked for, oldest first. */
  requestedBy(taskId: string): PendingConfirmation[] {
    return [...this.#pending.values()].filter((p) => p.task_id === taskId);
  }

  /** Every confirmation still waiting, oldest first. */
  list(): ConfirmationSummary[] {
    this.#expire();
    return [...this.#pending.values()].map((p) => this.summary(p));
  }

  /** When the next waiting confirmation expires (epoch ms), if any waits. */
  nextExpiry(): number | undefined {
    let next: number | undefined;
    for (const p of this.#pending.values()) next = next === undefined ? p.expires_at : Math.min(next, p.expires_at);
    return next;
  }

  /**
   * Checks whether an input decides a confirmation (`/confirm CODE`, `/deny CODE`). Only an owner
   * input does; a matching code is consumed (it runs at most once). Anything else carrying a
   * decision is refused with a reason, and without telling whether the code exists.
   */
  match(input: InputEvent): ConfirmationMatch {
    if (typeof input.payload !== 'string') return { kind: 'none' };
    const found = DECISION_INPUT.exec(input.payload);
    if (!found?.[1] || !found[2]) return { kind: 'none' };
    const language = textLanguage(input.payload);
    if (input.sender.trust !== 'owner') return { kind: 'refused', text: TEXT[language].notOwner(input.sender) };
    this.#expire();
    const code = found[2].toUpperCase();
    const pending = this.#pending.get(code);
    if (!pending) return { kind: 'refused', text: TEXT[language].unknown(code) };
    const deny = DENY_WORDS.has(found[1].toLowerCase());
    this.#resolve(pending, deny ? 'denied' : 'approved', input.sender.id);
    return deny ? { kind: 'denied', pending } : { kind: 'confirmed', pending };
  }

  /** Drops a waiting confirmation on the owner's word (`homeagentctl confirm deny`); false when none has that code. */
  deny(code: string, by: string): PendingConfirmation | undefined {
    this.#expire();
    const pending = this.#pending.get(code.toUpperCase());
    if (pending) this.#resolve(pending, 'denied', by);
    return pending;
  }

  /** What the owner is shown: the exact tool and arguments, where the request came from, and how to decide. */
  requestText(pending: PendingConfirmation, language: Language = pending.language): string {
    const minutes = Math.max(1, Math.round((pending.expires_at - pending.created_at) / 60000));
    const args = pending.shown_arguments;
    const shown = args.length > MAX_SHOWN_ARGUMENT_CHARS ? `${args.slice(0, MAX_SHOWN_ARGUMENT_CHARS)}… (${args.length} characters)` : args;
    const text = TEXT[language];
    return [
      `${REQUEST_MARKER[language]} ${text.wants(pending.tool, shown)}`,
      ...(pending.steps === undefined ? [] : [text.steps(cut(pending.steps.map((step, i) => `${i + 1}) ${step}`).join('; ')))]),
      ...(pending.trust.level === 'owner' ? [] : [text.origin(pending)]),
      text.howTo(pending.code, minutes),
    ].join('\n');
  }

  /** The line the requester gets instead of the request when the owner is asked elsewhere. */
  askedElsewhereText(language: Language): string {
    return TEXT[language].askedElsewhere;
  }

  summary(pending: PendingConfirmation): ConfirmationSummary {
    return {
      code: pending.code,
      tool: pending.tool,
      arguments: pending.shown_arguments,
      origin: pending.origin,
      trust: pending.trust,
      inline: pending.inline,
      created_at: pending.created_at,
      expires_at: pending.expires_at,
      text: this.requestText(pending),
    };
  }

  #resolve(pending: PendingConfirmation, outcome: 'approved' | 'denied' | 'expired', by: string): void {
    this.#pending.delete(pending.code);
    this.#options.events?.emit('confirmation.resolved', { code: pending.code, tool: pending.tool, outcome, by });
  }

  #expire(): void {
    const now = this.#options.now();
    for (const p of [...this.#pending.values()]) if (p.expires_at <= now) this.#resolve(p, 'expired', 'kernel');
  }

  #newCode(): string {
    for (;;) {
      let code = '';
      for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
      if (!this.#pending.has(code)) return code;
    }
  }
}

/** The steps a call would run, from its tool; undefined when the tool gives none or they cannot be told. */
function callSteps(definition: ToolDefinition, call: ToolCall): string[] | undefined {
  if (!definition.confirmation_detail) return undefined;
  try {
    const steps = definition.confirmation_detail(JSON.parse(call.arguments || '{}'));
    return Array.isArray(steps) && steps.length > 0 ? steps.map(String) : undefined;
  } catch {
    return undefined;
  }
}

function cut(text: string): string {
  return text.length > MAX_SHOWN_ARGUMENT_CHARS ? `${text.slice(0, MAX_SHOWN_ARGUMENT_CHARS)}… (${text.length} characters)` : text;
}

const TRUST_WORDS: Record<Language, Record<InputSender['trust'], string>> = {
  en: { owner: 'the owner', household: 'the household, not proven to be the owner', untrusted: 'untrusted' },
  zh: { owner: '主人', household: '家里的成员，未证明是主人', untrusted: '不可信' },
};

const TEXT = {
  en: {
    wants: (tool: string, args: string) => `The assistant wants to run ${tool} with ${args}.`,
    steps: (steps: string) => `It runs: ${steps}.`,
    origin: (p: PendingConfirmation) => {
      const from = `Asked for on ${p.origin.channel} by ${p.origin.sender.id} (${TRUST_WORDS.en[p.origin.sender.trust]}: ${p.origin.sender.proof})`;
      return p.trust.lowered_by.length === 0 ? `${from}.` : `${from}, after reading ${p.trust.lowered_by.join(', ')}.`;
    },
    howTo: (code: string, minutes: number) =>
      `Reply "/confirm ${code}" within ${minutes} min to run it exactly like that, or "/deny ${code}"; otherwise nothing happens.`,
    askedElsewhere:
      "This needs the owner's approval, so it has not run: the owner has been asked (on the web page, or with homeagentctl confirm list).",
    notOwner: (sender: InputSender) =>
      `Only the owner can approve or refuse dangerous actions, and this message came from ${sender.id} (${sender.proof}). Nothing was run.`,
    unknown: (code: string) =>
      `There is no pending action with the code ${code} (it may have expired, or the daemon restarted: waiting actions are not kept across restarts). Nothing was run.`,
  },
  zh: {
    wants: (tool: string, args: string) => `助手想要运行 ${tool}，参数 ${args}。`,
    steps: (steps: string) => `它会依次运行：${steps}。`,
    origin: (p: PendingConfirmation) => {
      const from = `请求来自 ${p.origin.channel} 上的 ${p.origin.sender.id}（${TRUST_WORDS.zh[p.origin.sender.trust]}：${p.origin.sender.proof}）`;
      return p.trust.lowered_by.length === 0 ? `${from}。` : `${from}，之前读到过：${p.trust.lowered_by.join('、')}。`;
    },
    howTo: (code: string, minutes: number) =>
      `请在 ${minutes} 分钟内回复"/confirm ${code}"（或"确认 ${code}"）按原样运行，回复"/deny ${code}"（或"拒绝 ${code}"）取消；否则不会执行。`,
    askedElsewhere: '这需要主人批准，所以还没有执行：已经请主人确认（在网页上，或用 homeagentctl confirm list）。',
    notOwner: (sender: InputSender) => `只有主人可以批准或拒绝危险操作，而这条消息来自 ${sender.id}（${sender.proof}）。没有执行任何操作。`,
    unknown: (code: string) =>
      `没有代码为 ${code} 的待确认操作（可能已过期，或守护进程重启过：待确认操作不会在重启后保留）。没有执行任何操作。`,
  },
} satisfies Record<Language, unknown>;
