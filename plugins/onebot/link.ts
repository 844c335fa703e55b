/**
 * The one connection interface both transports offer: the rest of the plugin sends frames and
 * hears about frames, connects and disconnects without knowing who dialled whom.
 */
import type WebSocket from 'ws';
import { HomeAgentError } from '../../src/sdk/index.js';

export interface LinkHandlers {
  /** A parsed JSON frame (an event or an action response). */
  onFrame(frame: unknown): void;
  /** A connection is up; `selfId` is the bot's QQ number when the peer said it (X-Self-ID). */
  onUp(selfId: number | undefined): void;
  onDown(reason: string): void;
}

export interface OneBotLink {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Sends one JSON frame; throws HA_ERR_ONEBOT_CONNECTION when nothing is connected. */
  send(frame: unknown): void;
  readonly connected: boolean;
}

/** Sends on an open socket, or says clearly that there is none. */
export function sendOn(socket: WebSocket | undefined, frame: unknown): void {
  if (socket?.readyState !== 1) {
    throw new HomeAgentError('HA_ERR_ONEBOT_CONNECTION', 'no OneBot implementation is connected to HomeAgent right now');
  }
  socket.send(JSON.stringify(frame));
}

/** Frames are JSON text; anything else is dropped (and counted by the caller through `false`). */
export function parseFrame(data: WebSocket.RawData): unknown {
  try {
    return JSON.parse(String(data));
  } catch {
    return undefined;
  }
}
