/**
 * HomeAgent's own MQTT broker (aedes), for a house without one (plugin.mqtt.broker_*; off by
 * default). Its retained messages, persistent sessions and their queues live in the plugin's data
 * folder ({@link FilePersistence}), so restarting HomeAgent does not lose them.
 *
 * Who may connect and publish where is {@link BrokerAccess}'s to say (broker-access.ts): a login
 * is required (the generated ones, broker-credentials.ts, and the one configured in
 * plugin.mqtt.broker_username / broker_password); anonymous clients only when
 * plugin.mqtt.broker_allow_anonymous says so, which is refused on anything but a loopback address;
 * only HomeAgent's own client publishes on HomeAgent's topics, retained or not, wills included.
 * A client that publishes there anyway is disconnected (MQTT 3.1.1 has no negative PUBACK); a
 * refused subscription gets the failure code 128 and keeps its connection.
 *
 * TLS (plugin.mqtt.broker_tls_cert_file / broker_tls_key_file): MQTT over TLS on broker_host at
 * broker_tls_port, and plain MQTT only on loopback (HomeAgent's own client and programs on this
 * machine), so no password crosses the network in clear. A TLS handshake that fails or stalls
 * (no more than the login timeout) ends that socket only.
 *
 * Connection storms: at most `maxConnections` clients logged in at once (HomeAgent's own client
 * always gets in); one more is refused with CONNACK "server unavailable" (it learns why, instead of
 * seeing the socket drop), sockets beyond a small margin are closed by the server right away, and
 * a socket that sends no CONNECT within `loginTimeoutMs` is closed. Every refusal, reset or
 * garbage packet ends that one connection and is logged (warnings at most once a minute per kind
 * and address, with the count left out), never an exception out of the broker.
 *
 * Wills: stop() closes the clients without a DISCONNECT, so their wills are published then, as
 * for any lost connection. After a crash, the stored wills of the clients that were cut off are
 * published by aedes's will sweep (every four heartbeats, about four minutes after the start)
 * unless the client has come back first. A stored will on HomeAgent's topics that HomeAgent's
 * client did not leave (one from a version without these rules) is deleted at start.
 */
import type { EventEmitter } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { createServer, isIP, type Server, type Socket } from 'node:net';
import { createSecureContext, createServer as createTlsServer } from 'node:tls';
import { Aedes, type AedesOptions, type AuthenticateError, type Client } from 'aedes';
import { addressScope, HomeAgentError, type Logger } from '../../src/sdk/index.js';
import { type BrokerAccess, type BrokerIdentity, CONNACK } from './broker-access.js';
import { type BrokerStoreLimits, FilePersistence } from './broker-persistence.js';
import { type InboundClock, ThrottledWarnings } from './inbound-router.js';
import type { MqttCounters } from './types.js';

export interface EmbeddedBrokerOptions {
  /** Address to listen on (plugin.mqtt.broker_host). */
  host: string;
  /** Port (plugin.mqtt.broker_port); 0 picks a free one (tests). */
  port: number;
  /** Who may log in and publish where (the logins, anonymous or not, HomeAgent's topics). */
  access: BrokerAccess;
  /**
   * MQTT over TLS on `host`:`tls.port` (plugin.mqtt.broker_tls_*); plain MQTT then listens on
   * loopback only. The certificate chain and key are PEM.
   */
  tls?: { cert: Buffer; key: Buffer; port: number };
  /** Clients at once (plugin.mqtt.broker_max_connections). */
  maxConnections: number;
  /** Where the state is kept: `<ctx.paths.data>/broker`. */
  dataDir: string;
  log: Logger;
  counters?: MqttCounters;
  /** Larger publishes are refused (the client is disconnected, as MQTT 3.1.1 has no other answer). Default 1 MiB. */
  maxPayloadBytes?: number;
  /** A socket that sends no CONNECT in this time is closed (plugin.mqtt.broker_login_timeout_ms). Default 10 s. */
  loginTimeoutMs?: number;
  limits?: Partial<BrokerStoreLimits>;
  /** For the warnings' once-a-minute throttle (tests). */
  clock?: InboundClock;
}

export interface EmbeddedBrokerStatus {
  /** Plain MQTT (on loopback when TLS is on). */
  url: string | undefined;
  /** MQTT over TLS on broker_host, when plugin.mqtt.broker_tls_* are set. */
  tls_url: string | null;
  /** `required`, or `anonymous allowed` (plugin.mqtt.broker_allow_anonymous). */
  login: 'required' | 'anonymous allowed';
  clients: number;
  retained: number;
  sessions: number;
  queued: number;
  stored_bytes: number;
  /** Connections refused at login, publishes and subscriptions refused by the rules, since the start. */
  refused: { logins: number; publishes: number; subscriptions: number };
}

/** Sockets accepted beyond maxConnections only to tell them CONNACK "server unavailable". */
const REFUSAL_MARGIN = 16;
const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
const DEFAULT_LOGIN_TIMEOUT_MS = 10_000;
/** The rights of a client whose login is not (or no longer) known: never more than a device's. */
const UNKNOWN: BrokerIdentity = { role: 'device', username: '', anonymous: false };

export class EmbeddedBroker {
  readonly #options: EmbeddedBrokerOptions;
  readonly #warnings: ThrottledWarnings;
  #broker: Aedes | undefined;
  /** The plain listener, and the TLS one when configured. */
  readonly #servers: Server[] = [];
  #persistence: FilePersistence | undefined;
  readonly #sockets = new Set<Socket>();
  /** Connections whose client logged in (the ones maxConnections counts), with their client id. */
  readonly #admitted = new Map<unknown, string>();
  /** Who each logged-in client is (kept past stop(): aedes may still publish a closing client's will). */
  readonly #identities = new WeakMap<Client, BrokerIdentity>();
  /** The will topic each CONNECT carried (seen in preConnect, decided in authenticate). */
  readonly #willTopics = new WeakMap<Client, string>();
  readonly #refused = { logins: 0, publishes: 0, subscriptions: 0 };
  #url: string | undefined;
  #tlsUrl: string | undefined;

  constructor(options: EmbeddedBrokerOptions) {
    this.#options = options;
    this.#warnings = new ThrottledWarnings(options.log, options.clock ?? { now: () => Date.now() });
  }

  /** The address the plugin's own client connects to, once started. */
  get url(): string | undefined {
    return this.#url;
  }

  status(): EmbeddedBrokerStatus {
    const stored = this.#persistence?.stats() ?? { retained: 0, sessions: 0, queued: 0, stored_bytes: 0 };
    return {
      url: this.#url,
      tls_url: this.#tlsUrl ?? null,
      login: this.#options.access.allowAnonymous ? 'anonymous allowed' : 'required',
      clients: this.#admitted.size,
      ...stored,
      refused: { ...this.#refused },
    };
  }

  /** Loads the stored state and listens; HA_ERR_MQTT_BROKER when the settings are unsafe or the port is taken. */
  async start(): Promise<{ url: string }> {
    if (this.#broker) throw new HomeAgentError('HA_ERR_MQTT_BROKER', 'the embedded MQTT broker is already running');
    const { host, port, log, access } = this.#options;
    this.#checkAnonymous();
    this.#checkTls();
    try {
      await mkdir(this.#options.dataDir, { recursive: true });
      this.#persistence = new FilePersistence({
        dir: this.#options.dataDir,
        log,
        ...(this.#options.limits ? { limits: this.#options.limits } : {}),
        ...(this.#options.counters ? { counters: this.#options.counters } : {}),
      });
      this.#broker = await Aedes.createBroker(this.#aedesOptions());
      await this.#dropForgedWills(this.#persistence);
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
    // A reset, a garbage packet, a CONNECT that never came: that connection ends, nothing else.
    this.#broker.on('clientError', (client: Client, error: Error) =>
      log.debug({ client: client.id, err: error.message }, 'MQTT client error'),
    );
    this.#broker.on('connectionError', (client: Client, error: Error) =>
      log.debug({ remote: remoteOf(client), err: error.message }, 'MQTT connection error before login'),
    );

    // With TLS, plain MQTT (HomeAgent's own client, programs on this machine) stays on loopback and
    // the network gets TLS: a login never crosses the network in clear.
    const tls = this.#options.tls;
    const plainHost = tls === undefined || addressScope(host) === 'loopback' ? host : '127.0.0.1';
    const boundPort = await this.#listen(
      createServer((socket) => this.#accept(socket)),
      plainHost,
      port,
    );
    this.#url = `mqtt://${clientHost(plainHost)}:${boundPort}`;
    if (tls !== undefined) {
      const secure = createTlsServer({ cert: tls.cert, key: tls.key, handshakeTimeout: this.#loginTimeoutMs() }, (socket) =>
        this.#accept(socket),
      );
      // Sockets still in their handshake are not handed to #accept yet; stop() must end them too.
      secure.on('connection', (socket: Socket) => this.#track(socket));
      // A failed handshake (garbage, a client that distrusts our certificate, a reset, the handshake
      // timeout) ends that socket only. Node reports it here but leaves the socket open: destroy it.
      secure.on('tlsClientError', (error, socket) => {
        log.debug({ remote: socket.remoteAddress, err: error.message }, 'MQTT TLS handshake failed');
        socket.destroy();
      });
      const tlsPort = await this.#listen(secure, host, tls.port);
      this.#tlsUrl = `mqtts://${clientHost(host)}:${tlsPort}`;
    }
    const login = access.allowAnonymous ? 'anonymous allowed' : 'required';
    log.info({ url: this.#url, tls_url: this.#tlsUrl ?? null, login, data_dir: this.#options.dataDir }, 'embedded MQTT broker listening');
    if (access.allowAnonymous) {
      log.warn(
        { host, port: boundPort },
        `embedded MQTT broker: plugin.mqtt.broker_allow_anonymous lets any program on this machine connect without a login and switch HomeAgent's entities through ${plainHost}:${boundPort}`,
      );
    }
    return { url: this.#url };
  }

  /** Closes the clients (their wills are published, as after any lost connection), the listeners, and saves the state. */
  async stop(): Promise<void> {
    const servers = this.#servers.splice(0);
    const broker = this.#broker;
    const persistence = this.#persistence;
    this.#broker = undefined;
    this.#persistence = undefined;
    this.#url = undefined;
    this.#tlsUrl = undefined;
    const closed = Promise.all(
      servers.filter((server) => server.listening).map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    );
    if (broker) await new Promise<void>((resolve) => broker.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    this.#admitted.clear();
    this.#warnings.clear();
    await closed;
    await persistence?.close();
  }

  /** Disconnects every client logged in as `username` (after its password was replaced); answers how many. */
  disconnectUser(username: string): number {
    const broker = this.#broker;
    if (broker === undefined) return 0;
    let count = 0;
    for (const client of Object.values((broker as unknown as { clients: Record<string, Client> }).clients)) {
      if (this.#identities.get(client)?.username !== username) continue;
      client.close();
      count++;
    }
    return count;
  }

  /** Listens (HA_ERR_MQTT_BROKER naming the address when it cannot); answers the port. */
  async #listen(server: Server, host: string, port: number): Promise<number> {
    this.#servers.push(server);
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
    server.on('error', (error) => this.#options.log.error({ err: error }, 'embedded MQTT broker listener error'));
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : port;
  }

  #loginTimeoutMs(): number {
    return this.#options.loginTimeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS;
  }

  #accept(socket: Socket): void {
    const broker = this.#broker;
    if (!broker) {
      socket.destroy();
      return;
    }
    this.#track(socket);
    broker.handle(socket);
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#sockets.delete(socket);
      this.#admitted.delete(socket);
    });
  }

  /** Anonymous access only where nobody but this machine can reach the broker. */
  #checkAnonymous(): void {
    const { host, access } = this.#options;
    if (!access.allowAnonymous || addressScope(host) === 'loopback') return;
    throw new HomeAgentError(
      'HA_ERR_MQTT_BROKER',
      `the embedded MQTT broker would let anyone on the network reach ${host} without a login: plugin.mqtt.broker_allow_anonymous is only allowed with broker_host 127.0.0.1 (devices log in with the credentials from homeagentctl mqtt credentials)`,
      { details: { host } },
    );
  }

  /** A certificate and key that do not make a TLS context fail the start before anything listens. */
  #checkTls(): void {
    const tls = this.#options.tls;
    if (tls === undefined) return;
    try {
      createSecureContext({ cert: tls.cert, key: tls.key });
    } catch (error) {
      throw new HomeAgentError(
        'HA_ERR_MQTT_BROKER',
        `plugin.mqtt.broker_tls_cert_file and broker_tls_key_file do not make a TLS certificate (PEM certificate chain and its private key): ${describe(error)}`,
        { cause: error },
      );
    }
  }

  /** Wills on HomeAgent's topics that its own client did not leave can only come from before these rules: never publish them. */
  async #dropForgedWills(persistence: FilePersistence): Promise<void> {
    const { access, log } = this.#options;
    for await (const will of persistence.streamWill()) {
      const packet = will as { clientId?: unknown; topic?: unknown };
      const clientId = String(packet.clientId ?? '');
      const topic = String(packet.topic ?? '');
      if (access.mayPublish(undefined, clientId, topic)) continue;
      await persistence.delWill({ id: clientId });
      log.warn({ client: clientId, topic }, "embedded MQTT broker: a stored will on HomeAgent's own topic from another client was deleted");
    }
  }

  #aedesOptions(): AedesOptions {
    const maxPayload = this.#options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    const { access } = this.#options;
    return {
      persistence: this.#persistence,
      connectTimeout: this.#loginTimeoutMs(),
      preConnect: (client, packet, done) => {
        if (packet.will?.topic !== undefined) this.#willTopics.set(client, packet.will.topic);
        done(null, true);
      },
      authenticate: (client, username, password, done) => {
        const result = access.login({ clientId: client.id, username, password, willTopic: this.#willTopics.get(client) });
        this.#willTopics.delete(client);
        if (!result.ok) {
          this.#refused.logins++;
          this.#warnings.warn(
            `login\u0000${result.kind}\u0000${remoteOf(client)}`,
            { client: client.id, username, remote: remoteOf(client) },
            `MQTT client refused: ${result.reason}`,
          );
          return done(refusal(result.returnCode, result.reason), false);
        }
        const conn = client.conn;
        // A client taking over its own session replaces a connection already counted.
        const takeover = [...this.#admitted.values()].includes(client.id);
        const full = !this.#admitted.has(conn) && !takeover && this.#admitted.size >= this.#options.maxConnections;
        // HomeAgent's own client always gets in: a crowd of devices must not cut HomeAgent off its own broker.
        if (full && result.identity.role !== 'homeagent') {
          this.#refused.logins++;
          this.#warnings.warn(
            `full\u0000${remoteOf(client)}`,
            { client: client.id, max_connections: this.#options.maxConnections, remote: remoteOf(client) },
            'MQTT client refused: too many connections',
          );
          return done(refusal(CONNACK.SERVER_UNAVAILABLE, 'too many connections'), false);
        }
        this.#identities.set(client, result.identity);
        this.#admitted.set(conn, client.id);
        done(null, true);
      },
      authorizePublish: (client, packet, done) => {
        if (packet.topic.startsWith('$SYS/')) return done(new Error("$SYS/ topics are the broker's"));
        if (packet.payload.length > maxPayload) {
          this.#warnings.warn(
            `oversized\u0000${client?.id ?? ''}`,
            { client: client?.id, topic: packet.topic, bytes: packet.payload.length, max: maxPayload },
            'MQTT publish refused: payload too large',
          );
          return done(new Error(`payload over ${maxPayload} bytes`));
        }
        // client is null only for a will aedes publishes after a restart, without its client.
        const identity = client === null ? undefined : (this.#identities.get(client) ?? UNKNOWN);
        const clientId = client?.id ?? String((packet as { clientId?: unknown }).clientId ?? '');
        if (!access.mayPublish(identity, clientId, packet.topic)) {
          this.#refused.publishes++;
          this.#warnings.warn(
            `reserved\u0000${clientId}`,
            { client: clientId, username: identity?.username, topic: packet.topic, retain: packet.retain },
            `MQTT publish refused: ${packet.topic} is one of HomeAgent's own topics, which only HomeAgent publishes (commands go to <base>/<entity_id>/set, texts for the agent to <base>/agent/notify); the client is disconnected`,
          );
          return done(new Error(`${packet.topic} is HomeAgent's own topic`));
        }
        done(null);
      },
      authorizeSubscribe: (client, subscription, done) => {
        if (access.maySubscribe(this.#identities.get(client) ?? UNKNOWN, subscription.topic)) return done(null, subscription);
        this.#refused.subscriptions++;
        this.#warnings.warn(
          `subscribe\u0000${client.id}`,
          { client: client.id, filter: subscription.topic },
          'MQTT subscription refused (the broker answers 128)',
        );
        // null: MQTT's failure code for this filter; the connection stays.
        done(null, null);
      },
    };
  }
}

function refusal(returnCode: number, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

function remoteOf(client: Client): string {
  const conn = client.conn as Partial<Socket>;
  return typeof conn.remoteAddress === 'string' ? conn.remoteAddress : '';
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
