/**
 * The conversation shown on the chat view, kept outside the view so it survives switching views
 * and keeps following the event stream meanwhile. A message is posted with `wait: true`: the
 * receipt is the one answer every path gives (the agent, a local intent, a duplicate that was
 * skipped), while the stream shows the agent's work as it happens — text pieces, tool calls with
 * their results, the final answer. Events of an input arrive before the POST returns its id, so
 * an event of an unknown input on the web channel is adopted by the message still waiting for one.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from './api';
import { subscribe } from './events';
import { t } from './i18n';
import type { ChatResult, StreamEvents } from './types';

export const CHAT_CHANNEL = 'webui';
/** Items kept on the page; older ones scroll away for good. */
const MAX_ITEMS = 200;

export interface ToolCallView {
  id: string;
  name: string;
  arguments: string;
  /** Undefined while the tool runs. */
  ok?: boolean;
  content?: string;
}

export interface TurnView {
  kind: 'turn';
  key: number;
  input_id?: string;
  /** What the person wrote; absent for an input another window sent. */
  user?: string;
  /** The text of the model's current round, while it is being written. */
  live: string;
  liveRound: number;
  tools: ToolCallView[];
  answer?: string;
  error?: string;
  status: 'pending' | 'done' | 'failed';
  tokens?: number;
}

export interface OutputView {
  kind: 'output';
  key: number;
  text: string;
  at: number;
  /** A picture of the media store (an image output's payload, its media id): shown, not written out. */
  image?: { src: string; caption?: string };
}

export type ChatItem = TurnView | OutputView;

let items: ChatItem[] = [];
let nextKey = 1;
const listeners = new Set<(items: ChatItem[]) => void>();

function changed(): void {
  if (items.length > MAX_ITEMS) items = items.slice(-MAX_ITEMS);
  items = [...items];
  for (const listener of listeners) listener(items);
}

/** The turn of an input: known by id, or the oldest local message still waiting for its id, or a new one. */
function turnFor(inputId: string): TurnView {
  const turns = items.filter((i): i is TurnView => i.kind === 'turn');
  const known = turns.find((i) => i.input_id === inputId);
  if (known) return known;
  const waiting = turns.find((i) => i.input_id === undefined && i.user !== undefined && i.status === 'pending');
  if (waiting) {
    waiting.input_id = inputId;
    return waiting;
  }
  const turn: TurnView = { kind: 'turn', key: nextKey++, input_id: inputId, live: '', liveRound: 0, tools: [], status: 'pending' };
  items.push(turn);
  return turn;
}

function onDelta(e: StreamEvents['agent.text_delta']): void {
  if (e.channel !== CHAT_CHANNEL) return;
  const turn = turnFor(e.input_id);
  if (e.turn !== turn.liveRound || e.restart) {
    turn.live = '';
    turn.liveRound = e.turn;
  }
  turn.live += e.delta;
  changed();
}

function onChain(e: StreamEvents['agent.llm_chain']): void {
  if (e.channel !== CHAT_CHANNEL) return;
  const turn = turnFor(e.input_id);
  for (const call of e.tool_calls) {
    if (!turn.tools.some((c) => c.id === call.id)) turn.tools.push({ id: call.id, name: call.name, arguments: call.arguments });
  }
  if (e.tool_calls.length > 0) turn.live = '';
  changed();
}

function onToolResult(e: StreamEvents['agent.tool_result']): void {
  if (e.channel !== CHAT_CHANNEL) return;
  const turn = turnFor(e.input_id);
  let call = turn.tools.find((c) => c.id === e.call_id);
  if (call === undefined) {
    call = { id: e.call_id, name: e.name, arguments: '' };
    turn.tools.push(call);
  }
  call.ok = e.ok;
  call.content = e.content;
  changed();
}

function onAnswer(e: StreamEvents['agent.answer']): void {
  if (e.channel !== CHAT_CHANNEL) return;
  const turn = turnFor(e.input_id);
  turn.answer = e.text;
  turn.live = '';
  turn.status = 'done';
  delete turn.error;
  changed();
}

/** What the agent or an automation sent to the web page on its own. */
export function outputText(e: StreamEvents['webui.output']): string {
  if (typeof e.text === 'string') return e.text;
  if (typeof e.payload === 'string') return e.payload;
  return JSON.stringify(e.payload ?? e);
}

/** An image output's media id (`<sha256>`, `sha256:<sha256>` or `media:<sha256>`, as the server's media route takes). */
const MEDIA_ID = /^(?:sha256:|media:)?([0-9a-f]{64})$/i;

/** The picture an image output shows, when its payload is a media id; anything else stays text. */
export function outputImage(e: StreamEvents['webui.output']): OutputView['image'] {
  if (e.type !== 'image' || typeof e.payload !== 'string') return undefined;
  const digest = MEDIA_ID.exec(e.payload.trim())?.[1]?.toLowerCase();
  if (digest === undefined) return undefined;
  const caption = e.meta?.caption ?? e.meta?.alt;
  return { src: `/api/v1/media/${digest}`, ...(typeof caption === 'string' && caption.trim() !== '' && { caption: caption.trim() }) };
}

function onOutput(e: StreamEvents['webui.output']): void {
  const image = outputImage(e);
  items.push({
    kind: 'output',
    key: nextKey++,
    text: image?.caption ?? outputText(e),
    at: e.created_at ?? Date.now(),
    ...(image && { image }),
  });
  changed();
}

/** Follows the event stream; returns the function that stops following it. */
export function startChat(): () => void {
  const stops = [
    subscribe('agent.text_delta', onDelta),
    subscribe('agent.llm_chain', onChain),
    subscribe('agent.tool_result', onToolResult),
    subscribe('agent.answer', onAnswer),
    subscribe('webui.output', onOutput),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/** Posts a message and settles its turn with the receipt; resolves when the answer is there. */
export async function sendMessage(text: string): Promise<void> {
  const turn: TurnView = { kind: 'turn', key: nextKey++, user: text, live: '', liveRound: 0, tools: [], status: 'pending' };
  items.push(turn);
  changed();
  try {
    const result = await api.post<ChatResult>('/chat', { text, channel: CHAT_CHANNEL, wait: true });
    turn.input_id = result.input_id;
    const receipt = result.receipt;
    if (receipt?.usage) turn.tokens = receipt.usage.total_tokens;
    if (receipt === undefined || receipt.status === 'done') {
      if (turn.answer === undefined && receipt?.text !== undefined) turn.answer = receipt.text;
      turn.status = 'done';
    } else if (receipt.status === 'skipped') {
      turn.status = 'failed';
      turn.error = t('chat.skipped', { reason: receipt.reason ?? receipt.status });
    } else {
      turn.status = 'failed';
      turn.error = receipt.error ? `${receipt.error.message} (${receipt.error.code})` : (receipt.reason ?? receipt.status);
    }
  } catch (error) {
    // The agent may still answer (a timeout only ends the wait): agent.answer then settles the turn.
    if (turn.status === 'pending') {
      turn.status = 'failed';
      turn.error = errorText(error);
    }
  }
  turn.live = '';
  changed();
}

export function useChatItems(): ChatItem[] {
  const [value, setValue] = useState(items);
  useEffect(() => {
    listeners.add(setValue);
    setValue(items);
    return () => {
      listeners.delete(setValue);
    };
  }, []);
  return value;
}
