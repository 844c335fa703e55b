/**
 * Reverse WebSocket: the OneBot implementation (its "universal" client) connects to HomeAgent at
 * ws://host:port/path with `Authorization: Bearer <token>` (or `?access_token=`), `X-Self-ID` and
 * `X-Client-Role: Universal`. A wrong token or path is refused before the upgrade. One
 * implementation is served at a time: a new connection (the implementation restarted) replaces the old.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { TokenCheck } from '../../src/sdk/index.js';
import { type LinkHandlers, type OneBotLink, parseFrame, sendOn } from './link.js';

export interface ReverseServerOptions {
  host: string;
  port: number;
  path: string;
  /** Empty: no token asked (only allowed on loopback; the plugin checks that). */
  token: string;
  handlers: LinkHandlers;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

export class ReverseServer implements OneBotLink {
  readonly #o: ReverseServerOptions;
  readonly #check: TokenCheck | undefined;
  #http: Server | undefined;
  #wss: WebSocketServer | undefined;
  #socket: WebSocket | undefined;

  constructor(options: ReverseServerOptions) {
    this.#o = options;
    this.#check = options.token === '' ? undefined : new TokenCheck(options.token);
  }

  get connected(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  /** The port actually bound (port 0 picks one). */
  get port(): number {
    return (this.#http?.address() as AddressInfo | null)?.port ?? 0;
  }

  async start(): Promise<void> {
    const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
    const http = createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain' }).end('OneBot v11 reverse WebSocket: connect with ws://\n');
    });
    http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      const refusal = this.#refusal(req);
      if (refusal) {
        this.#o.log.warn({ remote: req.socket.remoteAddress, why: refusal.text }, 'OneBot connection refused');
        socket.end(`HTTP/1.1 ${refusal.status} ${refusal.text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws, req));
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(this.#o.port, this.#o.host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    this.#http = http;
    this.#wss = wss;
  }

  async stop(): Promise<void> {
    this.#socket?.terminate();
    this.#socket = undefined;
    for (const client of this.#wss?.clients ?? []) client.terminate();
    this.#wss?.close();
    const http = this.#http;
    this.#http = undefined;
    if (http) await new Promise<void>((resolve) => http.close(() => resolve()));
  }

  send(frame: unknown): void {
    sendOn(this.#socket, frame);
  }

  #refusal(req: IncomingMessage): { status: number; text: string } | undefined {
    const url = new URL(req.url ?? '/', 'http://onebot');
    if (url.pathname.replace(/\/+$/, '') !== this.#o.path.replace(/\/+$/, '')) return { status: 404, text: 'Not Found' };
    const role = String(req.headers['x-client-role'] ?? 'Universal');
    if (role.toLowerCase() !== 'universal') return { status: 400, text: 'Bad Request' };
    if (!this.#check) return undefined;
    const offered: string[] = [];
    const bearer = /^(?:Bearer|Token)[ \t]+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (bearer?.[1]) offered.push(bearer[1]);
    for (const token of url.searchParams.getAll('access_token')) offered.push(token);
    if (offered.length === 0) return { status: 401, text: 'Unauthorized' };
    return this.#check.anyMatches(offered) ? undefined : { status: 403, text: 'Forbidden' };
  }

  #accept(ws: WebSocket, req: IncomingMessage): void {
    const previous = this.#socket;
    this.#socket = ws;
    if (previous) previous.close(1000, 'replaced by a new connection');
    const selfId = Number(req.headers['x-self-id']);
    this.#o.log.info({ remote: req.socket.remoteAddress, self_id: selfId || undefined }, 'OneBot implementation connected');
    ws.on('message', (data) => this.#o.handlers.onFrame(parseFrame(data)));
    ws.on('error', () => {});
    ws.on('close', (code) => {
      if (this.#socket !== ws) return;
      this.#socket = undefined;
      this.#o.handlers.onDown(`connection closed (${code})`);
    });
    this.#o.handlers.onUp(Number.isSafeInteger(selfId) && selfId > 0 ? selfId : undefined);
  }
}
