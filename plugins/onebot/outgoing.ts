/**
 * Builds and sends outgoing messages: text split near max_message_chars (each part its own
 * send_private_msg / send_group_msg, in order, the first quoting the message answered), pictures
 * and voice from the media store as base64:// or from a URL, files through the implementation's
 * upload_private_file / upload_group_file.
 */
import { basename } from 'node:path';
import { HomeAgentError, type PluginMedia, ToolError } from '../../src/sdk/index.js';
import type { Segment } from './protocol.js';
import { splitText } from './text-split.js';

export interface Target {
  type: 'private' | 'group';
  id: number;
}

export type Call = (action: string, params: Record<string, unknown>) => Promise<unknown>;

const DIGEST = /^(?:sha256:|media:)?([0-9a-f]{64})$/i;

export function sendAction(target: Target): { action: string; key: string } {
  return target.type === 'group' ? { action: 'send_group_msg', key: 'group_id' } : { action: 'send_private_msg', key: 'user_id' };
}

/** Sends a text as one or more messages; `replyTo` quotes the message answered in the first. */
export async function sendText(call: Call, target: Target, text: string, maxChars: number, replyTo?: number): Promise<number> {
  const { action, key } = sendAction(target);
  const parts = splitText(text, maxChars);
  for (const [index, part] of parts.entries()) {
    const message: Segment[] = [];
    if (index === 0 && replyTo !== undefined) message.push({ type: 'reply', data: { id: String(replyTo) } });
    message.push({ type: 'text', data: { text: part } });
    await call(action, { [key]: target.id, message });
  }
  return parts.length;
}

/** A picture or voice message: a media-store digest is sent inline (base64://), an http(s) URL as it is. */
export function mediaFile(payload: string, media: PluginMedia): string {
  const digest = DIGEST.exec(payload.trim());
  if (digest?.[1]) return `base64://${media.read(digest[1].toLowerCase()).toString('base64')}`;
  if (/^https?:\/\//i.test(payload.trim())) return payload.trim();
  throw new ToolError({
    reason: 'format',
    field: 'payload',
    detail: 'a picture or voice message must be a media-store digest (64 hex characters) or an http(s) URL',
  });
}

export async function sendMedia(call: Call, target: Target, kind: 'image' | 'record', file: string, replyTo?: number): Promise<void> {
  const { action, key } = sendAction(target);
  const message: Segment[] = [];
  if (replyTo !== undefined && kind === 'image') message.push({ type: 'reply', data: { id: String(replyTo) } });
  message.push({ type: kind, data: { file } });
  await call(action, { [key]: target.id, message });
}

/** Uploads a file by path; an implementation without the upload actions is reported clearly. */
export async function sendFile(call: Call, target: Target, path: string, name?: string): Promise<void> {
  if (!path.startsWith('/')) {
    throw new ToolError({ reason: 'format', field: 'payload', detail: 'a file must be an absolute path on this machine' });
  }
  const action = target.type === 'group' ? 'upload_group_file' : 'upload_private_file';
  const key = target.type === 'group' ? 'group_id' : 'user_id';
  try {
    await call(action, { [key]: target.id, file: path, name: name || basename(path) });
  } catch (error) {
    const details = (error as { details?: { retcode?: number } }).details;
    if (details?.retcode === 1404) {
      throw new HomeAgentError('HA_ERR_ONEBOT_ACTION', `this OneBot implementation cannot upload files (${action} unsupported)`);
    }
    throw error;
  }
}
