/**
 * A scripted OneBot v11 implementation on loopback, speaking the real protocol over ws in either
 * role: `connectReversePeer` dials HomeAgent's reverse server like NapCat's universal client
 * (Authorization: Bearer, X-Self-ID, X-Client-Role: Universal); `startForwardPeer` is the
 * WebSocket server HomeAgent's forward client dials. It replays recorded event payloads
 * (test/fixtures/onebot/*.json), answers actions with recorded-style responses, records every
 * action it got, and can misbehave: stay silent (timeout), fail with a retcode, drop the connection.
 *
 *   const peer = await connectReversePeer({ url, token });
 *   peer.push(fixture('private-message'));
 *   const [send] = await peer.waitForActions('send_private_msg', 1);
 */
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { until } from './until.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'onebot');
export const SELF_ID = 3889001234;

// biome-ignore lint/suspicious/noExplicitAny: recorded payloads are edited freely in tests.
export type Payload = Record<string, any>;

/** A recorded payload, with fields replaced by `overrides`. */
export function fixture(name: string, overrides: Payload = {}): Payload {
  return { ...JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')), ...overrides };
}

const RESPONSES: Record<string, Payload> = fixture('action-responses');

/** How the peer answers an action: recorded response, failure, or never. */
export type Behaviour = { kind: 'answer' } | { kind: 'silent' } | { kind: 'fail'; retcode: number; wording: string };

export interface ReceivedAction {
  action: string;
  // biome-ignore lint/suspicious/noExplicitAny: action params are inspected freely in tests.
  params: Record<string, any>;
  echo: unknown;
}

export class OneBotPeer {
  readonly actions: ReceivedAction[] = [];
  /** Per action name; `*` for every action without its own. */
  readonly behaviour = new Map<string, Behaviour>();
  #socket: WebSocket | undefined;

  /** Attaches an open socket (a new one after a reconnect replaces the old). */
  attach(socket: WebSocket): void {
    this.#socket = socket;
    socket.on('message', (data) => this.#onAction(String(data)));
  }

  get open(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  /** Sends an event (a fixture, usually). */
  push(event: Payload): void {
    if (!this.#socket) throw new Error('onebot peer: not connected');
    this.#socket.send(JSON.stringify(event));
  }

  /** Drops the connection without a close handshake, as a crashing implementation does. */
  drop(): void {
    this.#socket?.terminate();
  }

  async close(): Promise<void> {
    const socket = this.#socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
    });
  }

  of(action: string): ReceivedAction[] {
    return this.actions.filter((a) => a.action === action);
  }

  async waitForActions(action: string, n: number): Promise<ReceivedAction[]> {
    await until(`${n} ${action} actions`, () => (this.of(action).length >= n ? true : undefined));
    return this.of(action);
  }

  #onAction(text: string): void {
    const request = JSON.parse(text) as ReceivedAction;
    this.actions.push(request);
    const behaviour = this.behaviour.get(request.action) ?? this.behaviour.get('*') ?? { kind: 'answer' };
    if (behaviour.kind === 'silent') return;
    let response: Payload;
    if (behaviour.kind === 'fail') {
      response = { status: 'failed', retcode: behaviour.retcode, data: null, message: behaviour.wording, wording: behaviour.wording };
    } else {
      response = RESPONSES[request.action] ?? { status: 'failed', retcode: 1404, data: null, message: 'API不存在', wording: 'API不存在' };
    }
    this.#socket?.send(JSON.stringify({ ...response, echo: request.echo }));
  }
}

export interface ReversePeerOptions {
  url: string;
  token?: string;
  /** Put the token in ?access_token= instead of the header. */
  tokenInQuery?: boolean;
  selfId?: number;
}

/** Connects to HomeAgent's reverse server; rejects with the HTTP status when refused. */
export async function connectReversePeer(options: ReversePeerOptions): Promise<OneBotPeer> {
  const url = new URL(options.url);
  const headers: Record<string, string> = { 'X-Self-ID': String(options.selfId ?? SELF_ID), 'X-Client-Role': 'Universal' };
  if (options.token !== undefined) {
    if (options.tokenInQuery) url.searchParams.set('access_token', options.token);
    else headers.Authorization = `Bearer ${options.token}`;
  }
  const socket = new WebSocket(url, { headers });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new Error(`refused: HTTP ${res.statusCode}`)));
    socket.once('error', reject);
  });
  const peer = new OneBotPeer();
  peer.attach(socket);
  peer.push(fixture('lifecycle-connect', { self_id: options.selfId ?? SELF_ID }));
  return peer;
}

export interface ForwardPeer {
  url: string;
  peer: OneBotPeer;
  /** Headers of every connection attempt, in order (refused ones included). */
  handshakes: IncomingHttpHeaders[];
  /** Connections accepted so far. */
  accepted: number;
  close(): Promise<void>;
}

/** A OneBot WebSocket server for the forward client; with `token`, refuses others with 401. */
export async function startForwardPeer(options: { token?: string } = {}): Promise<ForwardPeer> {
  const peer = new OneBotPeer();
  const handshakes: IncomingHttpHeaders[] = [];
  const server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    verifyClient: (info, done) => {
      handshakes.push(info.req.headers);
      if (options.token === undefined || info.req.headers.authorization === `Bearer ${options.token}`) done(true);
      else done(false, 401, 'Unauthorized');
    },
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const result: ForwardPeer = {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    peer,
    handshakes,
    accepted: 0,
    close: async () => {
      for (const client of server.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', (socket) => {
    result.accepted++;
    peer.attach(socket);
    socket.send(JSON.stringify(fixture('lifecycle-connect')));
  });
  return result;
}
