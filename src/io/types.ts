/**
 * The IO vocabulary: input events, output events, output channels with capability bits, receipts,
 * and the contract between the input scheduler and the task runner (the agent).
 */

import type { Level, Receipt, ReceiptStatus, ReceiptUsage } from '../api/inputs.js';
import type { InputSender } from '../shared/trust.js';

export type { Level, Receipt, ReceiptStatus, ReceiptUsage };

/** What an output channel can carry; a channel's `capabilities` is the OR of these bits. */
export const CAPABILITY = {
  TEXT: 1,
  FILE: 2,
  IMAGE: 4,
  AUDIO: 8,
  STRUCTURED: 16,
} as const;

export type InputType = 'text' | 'audio' | 'image' | 'structured';
export type OutputType = 'text' | 'file' | 'image' | 'audio' | 'structured';

/** The capability bit an output type needs. */
export const CAPABILITY_FOR: Record<OutputType, number> = {
  text: CAPABILITY.TEXT,
  file: CAPABILITY.FILE,
  image: CAPABILITY.IMAGE,
  audio: CAPABILITY.AUDIO,
  structured: CAPABILITY.STRUCTURED,
};

export interface InputEvent {
  id: string;
  /** Who produced it: `cli`, `webui`, `mqtt`, `timer`, `plugin:<name>`, `_consolidation_`. */
  source: string;
  /** The conversation it belongs to (`cli`, a chat id, ...); answers go to the routed output channel. */
  channel: string;
  /** Who sent it and how the transport knows: decides what the turn may cause (docs/security.md). */
  sender: InputSender;
  type: InputType;
  /** Text for `text`; a media reference or structured object otherwise. */
  payload: unknown;
  meta: Record<string, unknown>;
  /** Epoch ms. */
  received_at: number;
  level: Level;
}

export interface OutputEvent {
  id: string;
  /** The input this answers, if any. */
  input_id?: string;
  channel: string;
  type: OutputType;
  payload: unknown;
  meta: Record<string, unknown>;
  created_at: number;
}

export interface OutputChannel {
  name: string;
  description: string;
  /** OR of {@link CAPABILITY} bits. */
  capabilities: number;
  /**
   * Synchronous channels (CLI, web chat) get the final answer text as the receipt of the input;
   * asynchronous ones (chat apps, speakers) must be sent to with output_send__<name>.
   */
  synchronous: boolean;
  /** Sends to it drive something that matters (a door lock, a siren): output_send__<name> is then a dangerous tool. */
  critical?: boolean;
  /**
   * Conversations (input channels) besides its own name whose answers it delivers: the speaker
   * answers the `voice` conversation. A conversation answered by several channels goes to the
   * first registered.
   */
  answers?: readonly string[];
  owner: string;
  send(event: OutputEvent): Promise<void>;
  /**
   * Whether someone would get a message nobody is waiting for right now (a timer ringing): a web
   * page following the event stream, a connected chat app. Absent: an asynchronous channel is
   * taken to deliver what is sent (a speaker), a synchronous one not (the CLI answers only the
   * request that waits). See later-delivery.ts.
   */
  listening?(): boolean;
}

/**
 * What the scheduler gives the task runner. The runner calls `safePoint()` between steps; it
 * returns at once unless a higher-level interrupt is waiting, in which case the task is suspended
 * there and the promise resolves when it is resumed. `llmSignal()` is aborted when the task is
 * pre-empted during an LLM request: the runner discards that answer and re-sends the request
 * after its next safe point. `critical(fn)` runs a step that must not be interrupted (tool
 * execution, commit); a pre-emption arriving meanwhile waits for its end. Once the task is
 * cancelled (`signal` aborted), `safePoint()` rejects with HA_ERR_ABORTED so the runner unwinds.
 */
export interface TaskControl {
  readonly task_id: string;
  /** Aborted when the task is cancelled for good (shutdown, dropped): stop as soon as possible. */
  readonly signal: AbortSignal;
  safePoint(): Promise<void>;
  llmSignal(): AbortSignal;
  critical<T>(fn: () => Promise<T>): Promise<T>;
}

export interface TaskResult {
  text?: string;
  /** Tokens the task's LLM rounds used. */
  usage?: ReceiptUsage;
  /**
   * The turn ended with an answer, but what was asked did not happen (no language model
   * answered, a tool failed, the answer could not be delivered): the receipt still says `done`
   * with that text, and the same input may be sent again at once (it is not a duplicate).
   */
  failed?: boolean;
}

/** The agent, as the scheduler sees it. */
export interface TaskRunner {
  run(input: InputEvent, control: TaskControl): Promise<TaskResult>;
}
