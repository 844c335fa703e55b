/**
 * Reverse WebSocket: the OneBot implementation (its "universal" client) connects to HomeAgent at
 * ws://host:port/path with `Authorization: Bearer <token>` (or `?access_token=`), `X-Self-ID` and
 * `X-Client-Role: Universal`. A wrong token or path is refused before the upgrade. One
 * implementation is served at a time: a new connection (the implementation restarted) replaces the old.
 *
 * Node hands the upgrade socket over with no error handling of its own, so the 'error' listener
 * goes on first, before a refusal is written: a client that resets mid-handshake ends its own
 * connection, never the daemon. Refusals are logged a few times a minute at most (a storm of bad
 * tokens must not flood the journal) and the last one is kept for health().
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { LogThrottle, TokenCheck } from '../../src/sdk/index.js';
import { deliverFrame, type LinkHandlers, type LinkLog, type OneBotLink, sendOn } from './link.js';

const LOG_WINDOW_MS = 60_000;
const LOG_PER_WINDOW = 5;

export interface ReverseServerOptions {
  host: string;
  port: number;
  path: string;
  /** Empty: no token asked (only allowed on loopback; the plugin checks that). */
  token: string;
  handlers: LinkHandlers;
  log: LinkLog;
}

export class ReverseServer implements OneBotLink {
  readonly #o: ReverseServerOptions;
  readonly #check: TokenCheck | undefined;
  readonly #throttle = new LogThrottle({ windowMs: LOG_WINDOW_MS, perWindow: LOG_PER_WINDOW });
  #http: Server | undefined;
  #wss: WebSocketServer | undefined;
  #socket: WebSocket | undefined;
  #lastRefusal: string | undefined;
  /** Since start: connections refused before the upgrade, and connections ended by a socket error. */
  refused = 0;
  peerErrors = 0;

  constructor(options: ReverseServerOptions) {
    this.#o = options;
    this.#check = options.token === '' ? undefined : new TokenCheck(options.token);
  }

  get connected(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  get problem(): string | undefined {
    return this.#lastRefusal === undefined ? undefined : `${this.refused} connections refused, the last: ${this.#lastRefusal}`;
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
      socket.on('error', (error) => this.#peerError(error));
      const refusal = this.#refusal(req);
      if (refusal) {
        this.refused++;
        const remote = req.socket.remoteAddress;
        this.#lastRefusal = `${refusal.status} ${refusal.text}${remote ? ` from ${remote}` : ''}`;
        this.#log('refused', 'warn', { remote, status: refusal.status }, `OneBot connection refused: ${refusal.status} ${refusal.text}`);
        // Closed once the answer is out: a client that never closes its side must not hold the socket.
        socket.end(`HTTP/1.1 ${refusal.status} ${refusal.text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => socket.destroy());
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

  #log(kind: string, level: 'debug' | 'warn', fields: object, message: string): void {
    const admitted = this.#throttle.admit(kind);
    if (admitted) this.#o.log[level]({ ...fields, ...(admitted.suppressed > 0 ? { suppressed: admitted.suppressed } : {}) }, message);
  }

  #peerError(error: NodeJS.ErrnoException): void {
    this.peerErrors++;
    this.#log('peer_error', 'debug', { code: error.code }, `OneBot connection ended by an error: ${error.message}`);
  }

  #refusal(req: IncomingMessage): { status: number; text: string } | undefined {
    let url: URL;
    try {
      // A request target such as `//` or `//host:99999` is no URL path.
      url = new URL(req.url ?? '/', 'http://onebot');
    } catch {
      return { status: 400, text: 'Bad Request' };
    }
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
    ws.on('message', (data) => deliverFrame(this.#o.handlers, data, this.#o.log));
    // A frame that breaks the protocol: the connection ends now (ws would wait 30 s for a closing
    // handshake with the peer that broke it), and 'close' reports it.
    ws.on('error', (error) => {
      this.#peerError(error);
      ws.terminate();
    });
    ws.on('close', (code) => {
      if (this.#socket !== ws) return;
      this.#socket = undefined;
      this.#o.handlers.onDown(`connection closed (${code})`);
    });
    this.#o.handlers.onUp(Number.isSafeInteger(selfId) && selfId > 0 ? selfId : undefined);
  }
}
