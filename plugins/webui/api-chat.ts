/**
 * Chat from the web page: POST /api/v1/chat hands the text to the agent as an input on the
 * `webui` channel (or a named `webui_<room>` conversation) and answers with the input's id at
 * once, so the page follows the turn on the event stream (deltas, tool calls, the answer all
 * carry `input_id`); with `wait: true` it also waits for the receipt, at most chat_timeout_ms.
 * The `webui` output channel is how the agent and automations reach the page unasked: what they
 * send is kept in the event ring as `webui.output`.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { CAPABILITY, type OutputEvent, type Receipt } from '../../src/sdk/index.js';
import { bodyObject, invalidParams, noQuery } from './api-params.js';
import type { EventRing } from './event-ring.js';
import { awaitReceipt } from './receipt-wait.js';
import { type RouteDeps, requestSender } from './types.js';

export const OUTPUT_CHANNEL = 'webui';
export const OUTPUT_EVENT = 'webui.output';
/** `webui`, or a separate conversation of the page (`webui_kitchen`): each has its own history. */
export const CHAT_CHANNEL = /^webui(_[a-z0-9_]{1,24})?$/;
/** The longest message, as `homeagentctl chat` (agent.chat) allows. */
export const MAX_CHAT_CHARS = 100_000;

export interface ChatRouteOptions {
  ring: EventRing;
  /** A fresh input id (8-64 characters of A-Z a-z 0-9 _ -). */
  newId?: () => string;
  /** Whether a page is following the event stream now (the channel's OutputChannel.listening). */
  listening?: () => boolean;
}

export interface ChatAnswer {
  input_id: string;
  receipt?: Receipt;
}

const newInputId = () => `webui_${randomBytes(16).toString('base64url')}`;

function readChat(body: unknown): { text: string; channel: string; wait: boolean } {
  const fields = bodyObject(body, ['text', 'channel', 'wait']);
  const { text, channel = OUTPUT_CHANNEL, wait = false } = fields;
  if (typeof text !== 'string' || text.trim() === '') throw invalidParams('text must be a non-empty string');
  if (text.length > MAX_CHAT_CHARS) throw invalidParams(`text is longer than ${MAX_CHAT_CHARS} characters`);
  if (typeof channel !== 'string' || !CHAT_CHANNEL.test(channel)) {
    throw invalidParams(`channel must be webui or webui_<name> (a-z, 0-9, _; at most 24), got ${JSON.stringify(channel)}`);
  }
  if (typeof wait !== 'boolean') throw invalidParams('wait must be true or false');
  return { text, channel, wait };
}

export function chatRoutes(app: FastifyInstance, deps: RouteDeps, options: ChatRouteOptions): void {
  const { ctx } = deps;
  const newId = options.newId ?? newInputId;

  // Registered while the plugin starts, so it lives and goes with the plugin.
  ctx.io.registerOutputChannel({
    name: OUTPUT_CHANNEL,
    description: 'the web page (text and pictures; markdown shown)',
    capabilities: CAPABILITY.TEXT | CAPABILITY.IMAGE,
    synchronous: true,
    send: async (event: OutputEvent) => void options.ring.push(OUTPUT_EVENT, event),
    ...(options.listening !== undefined && { listening: options.listening }),
  });

  app.post('/chat', async (request): Promise<{ ok: true; result: ChatAnswer }> => {
    noQuery(request.query);
    const chat = readChat(request.body);
    const inputId = newId();
    const receipt = ctx.io.injectInput({
      id: inputId,
      source: OUTPUT_CHANNEL,
      channel: chat.channel,
      sender: requestSender(request),
      payload: chat.text,
      meta: {},
    });
    if (!chat.wait) {
      void receipt.then(
        (done) => {
          if (done.status === 'failed') ctx.log.warn({ input_id: inputId, error: done.error }, 'web chat input failed');
        },
        (error: unknown) => ctx.log.warn({ input_id: inputId, err: error }, 'web chat input failed'),
      );
      return { ok: true, result: { input_id: inputId } };
    }
    const timeoutMs = deps.settings().chat_timeout_ms;
    const timeoutMessage = (ms: number) =>
      `the agent did not answer input ${inputId} within ${ms} ms (plugin.webui.chat_timeout_ms); it keeps running: its answer arrives on /api/v1/events`;
    return { ok: true, result: { input_id: inputId, receipt: await awaitReceipt(receipt, timeoutMs, timeoutMessage) } };
  });
}
