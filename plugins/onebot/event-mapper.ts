/**
 * OneBot message events as the agent reads them: the text with the bot's own @-mention removed
 * and other mentions as "@name", picture URLs in meta.images, and the ids needed to answer
 * (conversation `qq:private:<user>` or `qq:group:<group>`, message_id for a reply segment).
 */
import { toSegments } from './cq-code.js';
import type { OneBotEvent, Segment } from './protocol.js';

export const SOURCE = 'qq';

export interface MappedMessage {
  type: 'private' | 'group';
  conversation: string;
  user_id: number;
  group_id?: number;
  message_id: number | undefined;
  sender_name: string;
  /** The message @-mentions the bot (always true in private). */
  mentioned: boolean;
  text: string;
  images: string[];
  /** The message it quotes (reply segment), if any. */
  reply_to?: string;
}

export function conversationOf(type: 'private' | 'group', id: number | string): string {
  return `qq:${type}:${id}`;
}

/** Parses `qq:private:123` / `qq:group:456`; undefined for anything else. */
export function parseConversation(channel: unknown): { type: 'private' | 'group'; id: number } | undefined {
  if (typeof channel !== 'string') return undefined;
  const match = /^qq:(private|group):(\d{1,15})$/.exec(channel);
  if (!match) return undefined;
  return { type: match[1] as 'private' | 'group', id: Number(match[2]) };
}

/** undefined when the event is not a private or group message we can read. */
export function mapMessage(event: OneBotEvent, selfId: number | undefined): MappedMessage | undefined {
  if (event.post_type !== 'message') return undefined;
  const type = event.message_type;
  if (type !== 'private' && type !== 'group') return undefined;
  const userId = Number(event.user_id ?? event.sender?.user_id);
  if (!Number.isSafeInteger(userId) || userId <= 0) return undefined;
  const groupId = type === 'group' ? Number(event.group_id) : undefined;
  if (type === 'group' && (!Number.isSafeInteger(groupId) || (groupId ?? 0) <= 0)) return undefined;
  const self = selfId ?? (typeof event.self_id === 'number' ? event.self_id : undefined);
  const segments = toSegments(event.message ?? event.raw_message ?? '');
  const { text, mentioned, images, reply_to } = readSegments(segments, self);
  const sender = event.sender ?? {};
  return {
    type,
    conversation: conversationOf(type, type === 'group' ? (groupId as number) : userId),
    user_id: userId,
    ...(groupId !== undefined ? { group_id: groupId } : {}),
    message_id: typeof event.message_id === 'number' ? event.message_id : undefined,
    sender_name: (sender.card || sender.nickname || String(userId)).trim(),
    mentioned: type === 'private' || mentioned,
    text,
    images,
    ...(reply_to !== undefined ? { reply_to } : {}),
  };
}

function readSegments(segments: Segment[], selfId: number | undefined) {
  let text = '';
  let mentioned = false;
  const images: string[] = [];
  let reply_to: string | undefined;
  for (const s of segments) {
    switch (s.type) {
      case 'text':
        text += s.data.text ?? '';
        break;
      case 'at': {
        const qq = s.data.qq ?? '';
        if (selfId !== undefined && qq === String(selfId)) mentioned = true;
        else if (qq === 'all') text += '@all';
        else text += `@${s.data.name || qq}`;
        break;
      }
      case 'image': {
        const url = s.data.url || s.data.file;
        if (url) images.push(url);
        text += '[picture]';
        break;
      }
      case 'record':
        text += '[voice message]';
        break;
      case 'face':
        text += '[emoji]';
        break;
      case 'reply':
        reply_to = s.data.id;
        break;
      default:
        text += `[${s.type}]`;
    }
  }
  return { text: text.replace(/[ \t]{2,}/g, ' ').trim(), mentioned, images, reply_to };
}
