/**
 * The device gateway: a WebSocket server (node:http + ws) where companion devices connect, say
 * hello, bind with their device id and token, and then stay as {@link DeviceSession}s. Every
 * connection is bounded before it has proved anything: at most max_connections sockets, at most
 * handshake_max_bytes read before bind (counted on the raw socket, so an unauthenticated peer
 * cannot make the gateway buffer a large frame), and handshake_timeout_ms to finish. A frame that
 * is not protocol is answered with an `error` frame carrying its code; before bind that also ends
 * the connection, after bind only max_bad_frames of them do. Nothing a peer sends can throw out of
 * here: ws owns the framing, this module every 'error' event.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { HOMEAGENT_VERSION, type Logger, LogThrottle } from '../../src/sdk/index.js';
import { DeviceSession, type SessionLimits } from './device-session.js';
import type { RegisteredDevice } from './device-store.js';
import {
  CLOSE,
  capabilityMask,
  capabilityNames,
  DEVICE_ID,
  type DeviceFrame,
  type FrameProblem,
  type HelloFrame,
  isFrameProblem,
  PROTOCOL_VERSION,
  parseDeviceFrame,
} from './protocol.js';

export interface GatewayLimits extends SessionLimits {
  max_connections: number;
  handshake_max_bytes: number;
  handshake_timeout_ms: number;
  max_bad_frames: number;
}

export interface GatewayOptions {
  host: string;
  port: number;
  path: string;
  limits: () => GatewayLimits;
  /** The registered device whose token this is, or undefined. */
  verify(deviceId: string, token: string): RegisteredDevice | undefined;
  /** A device bound; the gateway hands the session over (the plugin replaces an older one of the same device). */
  bound(session: DeviceSession): void;
  /** A bound session ended (either side closed it). */
  ended(session: DeviceSession): void;
  log: Logger;
}

/** Counts since start, for health and device_ctl_status. */
export interface GatewayCounts {
  refused_connections: number;
  auth_failures: number;
  bad_frames: number;
  handshake_timeouts: number;
  too_large: number;
}

const LOG_WINDOW_MS = 60_000;
const LOG_PER_WINDOW = 5;

export class DeviceGateway {
  readonly #o: GatewayOptions;
  readonly #throttle = new LogThrottle({ windowMs: LOG_WINDOW_MS, perWindow: LOG_PER_WINDOW });
  readonly #sockets = new Set<Socket>();
  readonly counts: GatewayCounts = { refused_connections: 0, auth_failures: 0, bad_frames: 0, handshake_timeouts: 0, too_large: 0 };
  #http: Server | undefined;
  #wss: WebSocketServer | undefined;

  constructor(options: GatewayOptions) {
    this.#o = options;
  }

  get port(): number {
    return (this.#http?.address() as AddressInfo | null)?.port ?? 0;
  }

  get listening(): boolean {
    return this.#http?.listening ?? false;
  }

  async start(): Promise<void> {
    const limits = this.#o.limits();
    const wss = new WebSocketServer({ noServer: true, maxPayload: limits.max_message_bytes, perMessageDeflate: false });
    const http = createServer((_req, res) => {
      res
        .writeHead(426, { 'content-type': 'text/plain' })
        .end('HomeAgent device gateway: connect with a WebSocket (docs/remote-devices.md)\n');
    });
    http.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      socket.on('error', (error) =>
        this.#log('socket', 'debug', { code: (error as NodeJS.ErrnoException).code }, `device socket error: ${error.message}`),
      );
      const refusal = this.#refusal(req);
      if (refusal) {
        this.counts.refused_connections++;
        this.#log(
          'refused',
          'info',
          { remote: req.socket.remoteAddress, status: refusal.status },
          `device connection refused: ${refusal.text}`,
        );
        socket.end(`HTTP/1.1 ${refusal.status} ${refusal.text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => socket.destroy());
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws, socket, req));
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(this.#o.port, this.#o.host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    http.on('error', (error) => this.#o.log.error({ err: error }, 'device gateway server error'));
    this.#http = http;
    this.#wss = wss;
  }

  async stop(): Promise<void> {
    for (const client of this.#wss?.clients ?? []) client.close(CLOSE.SHUTDOWN, 'HomeAgent is stopping');
    const http = this.#http;
    this.#http = undefined;
    this.#wss?.close();
    this.#wss = undefined;
    if (!http) return;
    const closed = new Promise<void>((resolve) => http.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    await closed;
  }

  #refusal(req: IncomingMessage): { status: number; text: string } | undefined {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://gateway.invalid');
    } catch {
      return { status: 400, text: 'Bad Request' };
    }
    if (url.pathname.replace(/\/+$/, '') !== this.#o.path.replace(/\/+$/, '')) return { status: 404, text: 'Not Found' };
    // The upgrading socket is in #sockets already.
    if (this.#sockets.size > this.#o.limits().max_connections) return { status: 503, text: 'Service Unavailable' };
    return undefined;
  }

  #log(kind: string, level: 'debug' | 'info' | 'warn', fields: object, message: string): void {
    const admitted = this.#throttle.admit(kind);
    if (admitted) this.#o.log[level]({ ...fields, ...(admitted.suppressed > 0 ? { suppressed: admitted.suppressed } : {}) }, message);
  }

  /** One connection from the upgrade to its end: hello, bind, then the session. */
  #accept(ws: WebSocket, socket: Socket, req: IncomingMessage): void {
    const limits = this.#o.limits();
    const remote = req.socket.remoteAddress ?? '';
    let hello: HelloFrame | undefined;
    let session: DeviceSession | undefined;
    let badFrames = 0;
    let handshakeBytes = 0;

    const refuse = (close: number, problem: { code: string; message: string }) => {
      send(ws, { type: 'error', code: problem.code, message: problem.message });
      ws.close(close, problem.code);
      setTimeout(() => ws.terminate(), 2000).unref();
    };
    const countBytes = (chunk: Buffer) => {
      handshakeBytes += chunk.length;
      if (handshakeBytes <= limits.handshake_max_bytes) return;
      this.counts.too_large++;
      socket.off('data', countBytes);
      this.#log(
        'handshake_size',
        'info',
        { remote },
        `device connection closed: more than ${limits.handshake_max_bytes} bytes before bind`,
      );
      // The frame in flight is never parsed: the connection ends without reading it.
      send(ws, {
        type: 'error',
        code: 'HA_ERR_REMOTEDEVICE_TOO_LARGE',
        message: `more than ${limits.handshake_max_bytes} bytes before bind`,
      });
      ws.terminate();
    };
    socket.on('data', countBytes);
    const handshakeTimer = setTimeout(() => {
      this.counts.handshake_timeouts++;
      refuse(CLOSE.TIMEOUT, {
        code: 'HA_ERR_REMOTEDEVICE_HANDSHAKE_TIMEOUT',
        message: `hello and bind must come within ${limits.handshake_timeout_ms} ms`,
      });
    }, limits.handshake_timeout_ms);

    ws.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
        this.counts.too_large++;
        const why = { code: 'HA_ERR_REMOTEDEVICE_TOO_LARGE', message: `a message larger than ${limits.max_message_bytes} bytes` };
        if (session) session.ended(why);
      }
      this.#log(
        'ws_error',
        'info',
        { remote, code: error.code, device: session?.device.id },
        `device connection broke the WebSocket protocol: ${error.message}`,
      );
      // ws has sent its close frame (1009 too big, 1002 protocol error); the peer that broke it gets no 30 s grace.
      setTimeout(() => ws.terminate(), 1000).unref();
    });
    ws.on('close', (code) => {
      clearTimeout(handshakeTimer);
      socket.off('data', countBytes);
      if (!session) return;
      session.ended(session.closeReason ?? { code: 'HA_ERR_REMOTEDEVICE_OFFLINE', message: `the connection closed (${code})` });
      this.#o.ended(session);
    });

    ws.on('message', (data: RawData, isBinary: boolean) => {
      let frame: DeviceFrame | FrameProblem;
      if (isBinary) frame = { code: 'HA_ERR_REMOTEDEVICE_FRAME', message: 'binary frames are not part of protocol 1; send JSON text' };
      else frame = parseDeviceFrame(rawText(data));
      if (isFrameProblem(frame)) {
        this.counts.bad_frames++;
        badFrames++;
        this.#log('bad_frame', 'info', { remote, device: session?.device.id, code: frame.code }, `device frame refused: ${frame.message}`);
        if (!session || frame.code === 'HA_ERR_REMOTEDEVICE_PROTOCOL') return refuse(CLOSE.PROTOCOL, frame);
        send(ws, { type: 'error', code: frame.code, message: frame.message, ...(frame.id !== undefined && { id: frame.id }) });
        if (badFrames >= limits.max_bad_frames) {
          session.close(CLOSE.PROTOCOL, {
            code: 'HA_ERR_REMOTEDEVICE_FRAME',
            message: `${badFrames} frames were not protocol (plugin.remotedevice.max_bad_frames)`,
          });
        }
        return;
      }
      if (session) return this.#onSessionFrame(session, frame);
      if (frame.type === 'hello' && !hello) {
        hello = frame;
        send(ws, {
          type: 'welcome',
          protocol: PROTOCOL_VERSION,
          server: `homeagent/${HOMEAGENT_VERSION}`,
          max_message_bytes: limits.max_message_bytes,
          ping_interval_ms: limits.ping_interval_ms,
        });
        return;
      }
      if (frame.type === 'bind' && hello) {
        const device = DEVICE_ID.test(frame.device_id) ? this.#o.verify(frame.device_id, frame.token) : undefined;
        if (!device) {
          this.counts.auth_failures++;
          this.#log(
            'auth',
            'warn',
            { remote },
            `device bind refused: unknown device id or wrong token (${JSON.stringify(frame.device_id.slice(0, 40))})`,
          );
          return refuse(CLOSE.AUTH, { code: 'HA_ERR_REMOTEDEVICE_AUTH', message: 'unknown device id or wrong token' });
        }
        clearTimeout(handshakeTimer);
        socket.off('data', countBytes);
        session = new DeviceSession(
          ws,
          device,
          { client: hello.client, platform: hello.platform, remote, offered: capabilityMask(hello.capabilities), bound_at: Date.now() },
          this.#o.limits,
        );
        send(ws, { type: 'bound', device_id: device.id, name: device.name, capabilities: capabilityNames(session.capabilities) });
        this.#o.bound(session);
        return;
      }
      this.counts.bad_frames++;
      refuse(CLOSE.PROTOCOL, {
        code: 'HA_ERR_REMOTEDEVICE_PROTOCOL',
        message: hello ? `expected bind, got ${frame.type}` : `expected hello first, got ${frame.type}`,
      });
    });
  }

  #onSessionFrame(session: DeviceSession, frame: DeviceFrame): void {
    switch (frame.type) {
      case 'pong':
        session.pong(frame.id);
        return;
      case 'ping':
        session.touch();
        session.ping(frame.id);
        return;
      case 'result':
        if (!session.result(frame))
          this.#log('late_result', 'debug', { device: session.device.id }, 'device result for no pending request (late or unknown id)');
        return;
      default:
        session.touch();
        this.counts.bad_frames++;
        this.#log('bad_frame', 'info', { device: session.device.id }, `device sent ${frame.type} after binding`);
    }
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
}

function send(ws: WebSocket, frame: object): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
}
