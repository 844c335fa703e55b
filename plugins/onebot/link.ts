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
  /** What went wrong last (a refused connection, a failed attempt), for health(); undefined when nothing did. */
  readonly problem: string | undefined;
}

/** The part of the plugin's logger the links use. */
export interface LinkLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
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

/**
 * Hands a received frame to the plugin. ws calls this from inside the socket's data handler, where
 * an exception would be uncaught and end the daemon: whatever the frame, a failure to handle it is
 * logged and the connection goes on.
 */
export function deliverFrame(handlers: LinkHandlers, data: WebSocket.RawData, log: LinkLog): void {
  try {
    handlers.onFrame(parseFrame(data));
  } catch (error) {
    log.error({ err: error }, 'OneBot frame could not be handled');
  }
}
