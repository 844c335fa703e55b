/**
 * Shared pieces of the MQTT tests: the brokers under test (mosquitto and aedes behind one
 * interface), a TCP proxy that can cut connections ungracefully or refuse them, a MqttConnection
 * with test settings, hand-driven timers, and message collectors and waits that end at a deadline
 * instead of sleeping.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import type { Test } from 'tap';
import type { ConnectionSettings } from '../../../../plugins/mqtt/connection-options.js';
import { type ConnectionTimers, MqttConnection, type TimerHandle } from '../../../../plugins/mqtt/mqtt-connection.js';
import { emptyCounters, type MqttCounters, type MqttMessage } from '../../../../plugins/mqtt/types.js';
import type { EventBus } from '../../../../src/events/event-bus.js';
import { Mosquitto, mosquittoMissing } from '../../../helpers/mosquitto.js';
import { startTestBroker } from '../../../helpers/mqtt-test-broker.js';
import { silentLogs } from '../../fixtures/support.js';

export type BrokerKind = 'mosquitto' | 'aedes';

export const BROKER_KINDS: Array<{ kind: BrokerKind; skip: string | false }> = [
  { kind: 'mosquitto', skip: mosquittoMissing() ?? false },
  { kind: 'aedes', skip: false },
];

export interface TestBrokerHandle {
  kind: BrokerKind;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Runs cleanups last-in first-out at the test's end (connections before the brokers they use). */
export function cleanups(t: Test): (fn: () => Promise<void> | void) => void {
  const stack: Array<() => Promise<void> | void> = [];
  t.teardown(async () => {
    for (const fn of stack.reverse()) await fn();
  });
  return (fn) => void stack.push(fn);
}

export async function startBroker(
  t: Test,
  kind: BrokerKind,
  atEnd: (fn: () => Promise<void> | void) => void,
  options: { users?: Record<string, string> } = {},
): Promise<TestBrokerHandle> {
  if (kind === 'mosquitto') {
    const dir = join(t.testdir(), `mosquitto-${randomBytes(3).toString('hex')}`);
    mkdirSync(dir, { recursive: true });
    const broker = await Mosquitto.start({ dir, ...(options.users ? { users: options.users } : {}) });
    atEnd(() => broker.stop());
    return { kind, url: broker.url, port: broker.port, close: () => broker.stop() };
  }
  const broker = await startTestBroker();
  const users = options.users;
  if (users !== undefined) {
    broker.broker.authenticate = (_client, username, password, done) => {
      const ok = username !== undefined && users[username] !== undefined && password?.toString() === users[username];
      done(null, ok);
    };
  }
  atEnd(() => broker.close());
  return { kind, url: broker.url, port: broker.port, close: () => broker.close() };
}

/**
 * A loopback TCP proxy in front of a broker. `drop()` destroys every proxied connection at once
 * (the broker sees a socket die without DISCONNECT: its will fires), `refuse` makes it close new
 * connections at once (the broker looks down), `target` may point it at another broker.
 */
export class TcpProxy {
  target: number;
  refuse = false;
  accepted = 0;
  readonly #server: Server;
  readonly #pairs = new Set<[Socket, Socket]>();
  #port = 0;

  private constructor(target: number) {
    this.target = target;
    this.#server = createServer((inbound) => this.#accept(inbound));
  }

  static async start(target: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    proxy.#server.listen(0, '127.0.0.1');
    await once(proxy.#server, 'listening');
    const address = proxy.#server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    proxy.#port = address.port;
    return proxy;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.#port}`;
  }

  drop(): void {
    for (const [a, b] of this.#pairs) {
      a.destroy();
      b.destroy();
    }
    this.#pairs.clear();
  }

  async close(): Promise<void> {
    this.drop();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(inbound: Socket): void {
    this.accepted++;
    if (this.refuse) {
      inbound.destroy();
      return;
    }
    const outbound = tcpConnect(this.target, '127.0.0.1');
    const pair: [Socket, Socket] = [inbound, outbound];
    this.#pairs.add(pair);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
      this.#pairs.delete(pair);
    };
    inbound.on('error', end);
    outbound.on('error', end);
    inbound.on('close', end);
    outbound.on('close', end);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  }
}

export function testSettings(url: string, overrides: Partial<ConnectionSettings> = {}): ConnectionSettings {
  const id = randomBytes(4).toString('hex');
  return {
    url,
    username: '',
    password: '',
    client_id: `ha-test-${id}`,
    ca_file: '',
    cert_file: '',
    key_file: '',
    reject_unauthorized: true,
    base_topic: `hatest-${id}`,
    keepalive_s: 30,
    reconnect_min_ms: 100,
    reconnect_max_ms: 1000,
    connect_timeout_ms: 5000,
    publish_qos: 1,
    max_payload_bytes: 65536,
    outbox_max_messages: 10_000,
    ...overrides,
  };
}

export interface TestConnection {
  connection: MqttConnection;
  counters: MqttCounters;
  settings: ConnectionSettings;
  /** Resolves at the next (re)connection, after the subscriptions are renewed. */
  nextConnect(deadlineMs?: number): Promise<{ session_present: boolean }>;
  stop(): Promise<void>;
}

/** A started MqttConnection; stopped by `atEnd` unless the test stops it. `outboxDir` is kept across connections to model a daemon restart. */
export async function startConnection(
  atEnd: (fn: () => Promise<void> | void) => void,
  settings: ConnectionSettings,
  options: { outboxDir: string; timers?: ConnectionTimers; random?: () => number; log?: import('../../../../src/sdk/index.js').Logger },
): Promise<TestConnection> {
  const counters = emptyCounters();
  const connection = new MqttConnection({
    settings: () => settings,
    outboxDir: options.outboxDir,
    log: options.log ?? silentLogs().child('mqtt'),
    counters,
    ...(options.timers ? { timers: options.timers } : {}),
    ...(options.random ? { random: options.random } : {}),
  });
  const waiters: Array<(info: { session_present: boolean }) => void> = [];
  connection.onConnect((info) => {
    for (const w of waiters.splice(0)) w(info);
  });
  await connection.start();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await connection.stop();
  };
  atEnd(stop);
  return {
    connection,
    counters,
    settings,
    nextConnect: (deadlineMs = 10_000) => withDeadline(new Promise((resolve) => waiters.push(resolve)), 'a connection', deadlineMs),
    stop,
  };
}

/** Messages as a handler got them, with waits that end at a deadline. */
export class Inbox {
  readonly messages: MqttMessage[] = [];
  readonly #waiters: Array<{ check: () => boolean; resolve: () => void }> = [];

  readonly handler = (message: MqttMessage): void => {
    this.messages.push(message);
    for (const waiter of [...this.#waiters]) {
      if (waiter.check()) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  texts(): string[] {
    return this.messages.map((m) => m.payload.toString());
  }

  /** Resolves once `check` holds (checked now and after every message). */
  until(check: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
    if (check()) return Promise.resolve();
    return withDeadline(
      new Promise<void>((resolve) => this.#waiters.push({ check, resolve })),
      `${what} (got ${JSON.stringify(this.texts().slice(-10))})`,
      deadlineMs,
    );
  }

  count(n: number, deadlineMs = 10_000): Promise<void> {
    return this.until(() => this.messages.length >= n, `${n} message(s)`, deadlineMs);
  }
}

/** A plain mqtt.js client (clean session) for observing and publishing from outside HomeAgent. */
export async function plainClient(
  atEnd: (fn: () => Promise<void> | void) => void,
  url: string,
  subscribe: string[] = [],
): Promise<{ client: MqttClient; inbox: Array<{ topic: string; text: string; retain: boolean; qos: number }>; until: Inbox['until'] }> {
  const client = await mqtt.connectAsync(url, { clientId: `plain-${randomBytes(4).toString('hex')}`, reconnectPeriod: 0 });
  atEnd(() => client.endAsync(true));
  const inbox: Array<{ topic: string; text: string; retain: boolean; qos: number }> = [];
  const watcher = new Inbox();
  client.on('message', (topic, payload, packet) => {
    inbox.push({ topic, text: payload.toString(), retain: packet.retain, qos: packet.qos });
    watcher.handler({ topic, payload, qos: packet.qos, retain: packet.retain });
  });
  if (subscribe.length > 0) await client.subscribeAsync(subscribe, { qos: 1 });
  return { client, inbox, until: (check, what, deadline) => watcher.until(check, what, deadline) };
}

/** withDeadline's and untilEntities' deadline unless a test gives its own: in-process brokers answer in milliseconds. */
export const DEADLINE_MS = 5000;

/** `promise`, or a rejection naming `what` once `ms` have passed. */
export function withDeadline<T>(promise: Promise<T>, what: string, ms = DEADLINE_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Resolves once `check` holds, checked now and at every entity event (registered, state changed,
 * removed); a check that throws counts as not yet.
 */
export function untilEntities(events: EventBus, check: () => boolean, what: string, ms = DEADLINE_MS): Promise<void> {
  const holds = () => {
    try {
      return check();
    } catch {
      return false;
    }
  };
  if (holds()) return Promise.resolve();
  const offs: Array<() => void> = [];
  const changed = new Promise<void>((resolve) => {
    for (const event of ['entity.registered', 'entity.state_changed', 'entity.removed'] as const) {
      offs.push(events.on('test-wait', event, () => void (holds() && resolve())));
    }
  });
  return withDeadline(changed, what, ms).finally(() => {
    for (const off of offs) off();
  });
}

/** Resolves once the broker has taken `client`'s earlier SUBSCRIBEs: it handles one client's packets in order. */
export async function subscriptionsTaken(client: MqttClient): Promise<void> {
  await client.subscribeAsync('test/sync', { qos: 1 });
  await client.unsubscribeAsync('test/sync');
}

/** Polls a condition every few milliseconds until a deadline (for state that has no event). */
export async function eventually(check: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface ManualTimer {
  ms: number;
  fn: () => void;
  cancelled: boolean;
  fired: boolean;
}

/** Timers the test fires by hand; `next()` waits for the next one asked for. */
export class ManualTimers implements ConnectionTimers {
  readonly created: ManualTimer[] = [];
  readonly #waiters: Array<(timer: ManualTimer) => void> = [];
  #seen = 0;

  now(): number {
    return Date.now();
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer: ManualTimer = { ms, fn, cancelled: false, fired: false };
    this.created.push(timer);
    this.#waiters.shift()?.(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** The next timer created after the last one `next()` returned. */
  async next(deadlineMs = 10_000): Promise<ManualTimer> {
    const ready = this.created[this.#seen];
    if (ready !== undefined) {
      this.#seen++;
      return ready;
    }
    const timer = await withDeadline(new Promise<ManualTimer>((resolve) => this.#waiters.push(resolve)), 'a timer', deadlineMs);
    this.#seen++;
    return timer;
  }

  fire(timer: ManualTimer): void {
    if (timer.cancelled || timer.fired) return;
    timer.fired = true;
    timer.fn();
  }
}
