/**
 * HomeAgent's own MQTT broker (aedes), for a house without one (plugin.mqtt.broker_*; off by
 * default). Its retained messages, persistent sessions and their queues live in the plugin's data
 * folder ({@link FilePersistence}), so restarting HomeAgent does not lose them.
 *
 * Who may connect: with a user name and password configured, only clients presenting both
 * (compared in constant time, so that the answer time does not leak how much of a guess was
 * right). Without them, anyone who can reach the port — which is why that is only allowed when
 * the broker listens on a loopback address; anything else refuses to start. At most
 * `maxConnections` clients at once: one more is refused with CONNACK "server unavailable" (it
 * learns why, instead of seeing the socket drop), and sockets that never log in beyond a small
 * margin are closed by the server right away.
 *
 * Wills: stop() closes the clients without a DISCONNECT, so their wills are published then, as
 * for any lost connection. After a crash, the stored wills of the clients that were cut off are
 * published by aedes's will sweep (every four heartbeats, about four minutes after the start)
 * unless the client has come back first.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { createServer, isIP, type Server, type Socket } from 'node:net';
import { Aedes, type AedesOptions, type AuthenticateError, type Client } from 'aedes';
import { HomeAgentError, type Logger } from '../../src/sdk/index.js';
import { type BrokerStoreLimits, FilePersistence } from './broker-persistence.js';
import type { MqttCounters } from './types.js';

export interface EmbeddedBrokerOptions {
  /** Address to listen on (plugin.mqtt.broker_host). */
  host: string;
  /** Port (plugin.mqtt.broker_port); 0 picks a free one (tests). */
  port: number;
  /** The one login (plugin.mqtt.broker_username / broker_password); both empty: no login. */
  username: string;
  password: string;
  /** Clients at once (plugin.mqtt.broker_max_connections). */
  maxConnections: number;
  /** Where the state is kept: `<ctx.paths.data>/broker`. */
  dataDir: string;
  log: Logger;
  counters?: MqttCounters;
  /** Larger publishes are refused (the client is disconnected, as MQTT 3.1.1 has no other answer). Default 1 MiB. */
  maxPayloadBytes?: number;
  limits?: Partial<BrokerStoreLimits>;
}

/** Sockets accepted beyond maxConnections only to tell them CONNACK "server unavailable". */
const REFUSAL_MARGIN = 16;
const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
/** CONNACK return codes (MQTT 3.1.1 §3.2.2.3). */
const SERVER_UNAVAILABLE = 3;
const BAD_USERNAME_OR_PASSWORD = 4;

export class EmbeddedBroker {
  readonly #options: EmbeddedBrokerOptions;
  #broker: Aedes | undefined;
  #server: Server | undefined;
  #persistence: FilePersistence | undefined;
  readonly #sockets = new Set<Socket>();
  /** Connections whose client logged in (the ones maxConnections counts), with their client id. */
  readonly #admitted = new Map<unknown, string>();
  #url: string | undefined;

  constructor(options: EmbeddedBrokerOptions) {
    this.#options = options;
  }

  /** The address the plugin's own client connects to, once started. */
  get url(): string | undefined {
    return this.#url;
  }

  status(): { url: string | undefined; clients: number; retained: number; sessions: number; queued: number; stored_bytes: number } {
    const stored = this.#persistence?.stats() ?? { retained: 0, sessions: 0, queued: 0, stored_bytes: 0 };
    return { url: this.#url, clients: this.#admitted.size, ...stored };
  }

  /** Loads the stored state and listens; HA_ERR_MQTT_BROKER when the settings are unsafe or the port is taken. */
  async start(): Promise<{ url: string }> {
    if (this.#broker) throw new HomeAgentError('HA_ERR_MQTT_BROKER', 'the embedded MQTT broker is already running');
    const { host, port, log } = this.#options;
    const login = this.#checkLogin();
    try {
      await mkdir(this.#options.dataDir, { recursive: true });
      this.#persistence = new FilePersistence({
        dir: this.#options.dataDir,
        log,
        ...(this.#options.limits ? { limits: this.#options.limits } : {}),
        ...(this.#options.counters ? { counters: this.#options.counters } : {}),
      });
      this.#broker = await Aedes.createBroker(this.#aedesOptions(login));
    } catch (error) {
      await this.stop();
      throw new HomeAgentError(
        'HA_ERR_MQTT_BROKER',
        `the embedded MQTT broker could not load its state in ${this.#options.dataDir}: ${describe(error)}`,
        {
          cause: error,
        },
      );
    }
    // aedes reports persistence failures as 'error' events; unhandled, they would end the process.
    (this.#broker as EventEmitter).on('error', (error: Error) => log.error({ err: error }, 'embedded MQTT broker error'));
    this.#broker.on('clientError', (client: Client, error: Error) =>
      log.debug({ client: client.id, err: error.message }, 'MQTT client error'),
    );

    const server = createServer((socket) => this.#accept(socket));
    this.#server = server;
    server.maxConnections = this.#options.maxConnections + REFUSAL_MARGIN;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      await this.stop();
      throw new HomeAgentError('HA_ERR_MQTT_BROKER', listenProblem(error, host, port), { cause: error, details: { host, port } });
    }
    server.on('error', (error) => log.error({ err: error }, 'embedded MQTT broker listener error'));
    const address = server.address();
    const boundPort = typeof address === 'object' && address !== null ? address.port : port;
    this.#url = `mqtt://${clientHost(host)}:${boundPort}`;
    log.info({ host, port: boundPort, login: login !== undefined, data_dir: this.#options.dataDir }, 'embedded MQTT broker listening');
    return { url: this.#url };
  }

  /** Closes the clients (their wills are published, as after any lost connection), the listener, and saves the state. */
  async stop(): Promise<void> {
    const server = this.#server;
    const broker = this.#broker;
    const persistence = this.#persistence;
    this.#server = undefined;
    this.#broker = undefined;
    this.#persistence = undefined;
    this.#url = undefined;
    const closed = server?.listening ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    if (broker) await new Promise<void>((resolve) => broker.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    this.#admitted.clear();
    await closed;
    await persistence?.close();
  }

  #accept(socket: Socket): void {
    const broker = this.#broker;
    if (!broker) {
      socket.destroy();
      return;
    }
    this.#sockets.add(socket);
    socket.on('close', () => {
      this.#sockets.delete(socket);
      this.#admitted.delete(socket);
    });
    broker.handle(socket);
  }

  /** The configured login as digests (equal lengths for timingSafeEqual), or undefined for none. */
  #checkLogin(): { username: Buffer; password: Buffer } | undefined {
    const { username, password, host } = this.#options;
    if (username === '' && password === '') {
      if (isLoopback(host)) return undefined;
      throw new HomeAgentError(
        'HA_ERR_MQTT_BROKER',
        `the embedded MQTT broker would accept anyone on ${host} without a login: set plugin.mqtt.broker_username and broker_password, or listen on 127.0.0.1`,
        { details: { host } },
      );
    }
    if (username === '' || password === '')
      throw new HomeAgentError(
        'HA_ERR_MQTT_BROKER',
        `the embedded MQTT broker needs both plugin.mqtt.broker_username and broker_password (only the ${username === '' ? 'password' : 'user name'} is set)`,
      );
    return { username: digest(username), password: digest(password) };
  }

  #aedesOptions(login: { username: Buffer; password: Buffer } | undefined): AedesOptions {
    const maxPayload = this.#options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    return {
      persistence: this.#persistence,
      authenticate: (client, username, password, done) => {
        const conn = client.conn;
        // A client taking over its own session replaces a connection already counted.
        const takeover = [...this.#admitted.values()].includes(client.id);
        if (!this.#admitted.has(conn) && !takeover && this.#admitted.size >= this.#options.maxConnections) {
          this.#options.log.warn(
            { client: client.id, max_connections: this.#options.maxConnections },
            'MQTT client refused: too many connections',
          );
          return done(refusal(SERVER_UNAVAILABLE, 'too many connections'), false);
        }
        if (login) {
          // Both compared every time: no early exit that would time which one was wrong.
          const userOk = timingSafeEqual(digest(username ?? ''), login.username);
          const passwordOk = timingSafeEqual(digest(password ?? Buffer.alloc(0)), login.password);
          if (!(userOk && passwordOk)) {
            this.#options.log.warn({ client: client.id, username }, 'MQTT client refused: bad user name or password');
            return done(refusal(BAD_USERNAME_OR_PASSWORD, 'bad user name or password'), false);
          }
        }
        this.#admitted.set(conn, client.id);
        done(null, true);
      },
      authorizePublish: (client, packet, done) => {
        if (packet.topic.startsWith('$SYS/')) return done(new Error("$SYS/ topics are the broker's"));
        if (packet.payload.length > maxPayload) {
          this.#options.log.warn(
            { client: client?.id, topic: packet.topic, bytes: packet.payload.length, max: maxPayload },
            'MQTT publish refused: payload too large',
          );
          return done(new Error(`payload over ${maxPayload} bytes`));
        }
        done(null);
      },
    };
  }
}

function refusal(returnCode: number, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

function digest(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '0:0:0:0:0:0:0:1';
}

/** Where a local client reaches a broker listening on `host` (a wildcard address is reached on loopback). */
function clientHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return isIP(host) === 6 ? `[${host}]` : host;
}

function listenProblem(error: unknown, host: string, port: number): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return `port ${port} on ${host} is already in use (another MQTT broker, such as mosquitto?): stop it or set plugin.mqtt.broker_port`;
  if (code === 'EACCES') return `no permission to listen on port ${port} (ports below 1024 need privileges): set plugin.mqtt.broker_port`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return `${host} is not an address of this machine: set plugin.mqtt.broker_host (127.0.0.1 for this machine only, 0.0.0.0 for the network)`;
  return `the embedded MQTT broker could not listen on ${host}:${port}: ${describe(error)}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
