/**
 * A scripted Home Assistant on loopback speaking its WebSocket API (/api/websocket) as HA does:
 * `auth_required` first, `auth_ok` for the right token and `auth_invalid` (then a close) for a wrong
 * one, anything before auth closes the connection; id-numbered commands answered by `result`
 * (`unknown_command` for what it does not know, `id_reuse` for an id not above the last one),
 * `pong`, and `event` messages for `subscribe_events`. Its house (states, registries, the
 * exposed-to-Assist list) comes from test/fixtures/homeassistant/house.json; `call_service`
 * changes the state as HA's integrations would and fires `state_changed` before answering.
 *
 * It can misbehave like a real one: refuse the expose list to a non-administrator, fail a service,
 * stop answering pings, drop every connection, and restart (close, come back on the same port with
 * a changed house).
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type WebSocket, WebSocketServer } from 'ws';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'homeassistant', 'house.json');

// biome-ignore lint/suspicious/noExplicitAny: HA payloads are inspected and edited freely in tests.
export type Payload = Record<string, any>;

export interface House {
  ha_version: string;
  areas: Payload[];
  devices: Payload[];
  entities: Payload[];
  exposed: Record<string, { conversation: boolean }>;
  states: Payload[];
}

export function house(): House {
  return JSON.parse(readFileSync(FIXTURE, 'utf8')) as House;
}

export interface ServiceCall {
  domain: string;
  service: string;
  service_data: Payload | undefined;
  target: Payload | undefined;
}

export interface HaPeerOptions {
  token: string;
  /** Answer homeassistant/expose_entity/list (only administrators get it); default true. */
  admin?: boolean;
  port?: number;
}

let contextSeq = 0;
function context(): Payload {
  contextSeq++;
  return { id: `01JE${String(contextSeq).padStart(22, '0')}`, parent_id: null, user_id: null };
}

export class HaPeer {
  readonly calls: ServiceCall[] = [];
  /** Every command type received, in order (auth included as `auth`). */
  readonly received: string[] = [];
  authAttempts = 0;
  connections = 0;
  token: string;
  admin: boolean;
  answerPings = true;
  /** `domain.service` → an error HA answers with instead of running it. */
  readonly failures = new Map<string, { code: string; message: string }>();
  house: House;
  #server: WebSocketServer | undefined;
  #port = 0;
  readonly #sockets = new Set<WebSocket>();
  /** Per socket: event type → subscription ids. */
  readonly #subscriptions = new Map<WebSocket, Map<string, number[]>>();

  constructor(options: HaPeerOptions) {
    this.token = options.token;
    this.admin = options.admin ?? true;
    this.house = house();
    this.#port = options.port ?? 0;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.#port}/api/websocket`;
  }

  get port(): number {
    return this.#port;
  }

  /** Authenticated connections open now. */
  get authenticated(): number {
    return [...this.#subscriptions.keys()].filter((s) => s.readyState === 1).length;
  }

  async start(): Promise<void> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: this.#port, path: '/api/websocket' });
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
    server.on('connection', (socket) => this.#accept(socket));
  }

  /** Closes every connection and the listener (HA shutting down: close code 1001? HA just drops). */
  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.terminate();
    this.#sockets.clear();
    this.#subscriptions.clear();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** HA restarting: everything closes, then it listens again on the same port. */
  async restart(change?: (house: House) => void): Promise<void> {
    await this.stop();
    change?.(this.house);
    await this.start();
  }

  /** Drops every connection without a close frame (the network went away); keeps listening. */
  drop(): void {
    for (const socket of this.#sockets) socket.terminate();
  }

  state(entityId: string): Payload | undefined {
    return this.house.states.find((s) => s.entity_id === entityId);
  }

  /** Changes an entity's state as an integration would, firing state_changed to subscribers. */
  setState(entityId: string, state: string, attributes: Payload = {}): void {
    const old = this.state(entityId);
    const now = new Date().toISOString();
    const next: Payload = {
      entity_id: entityId,
      state,
      attributes: { ...(old?.attributes ?? {}), ...attributes },
      last_changed: old?.state === state ? old.last_changed : now,
      last_reported: now,
      last_updated: now,
      context: context(),
    };
    this.house.states = [...this.house.states.filter((s) => s.entity_id !== entityId), next];
    this.#fire('state_changed', { entity_id: entityId, old_state: old ?? null, new_state: next });
  }

  /** Removes an entity (its state_changed has new_state null). */
  removeEntity(entityId: string): void {
    const old = this.state(entityId);
    this.house.states = this.house.states.filter((s) => s.entity_id !== entityId);
    this.#fire('state_changed', { entity_id: entityId, old_state: old ?? null, new_state: null });
  }

  /** Fires any event to its subscribers (entity_registry_updated, ...). */
  fire(eventType: string, data: Payload): void {
    this.#fire(eventType, data);
  }

  #fire(eventType: string, data: Payload): void {
    for (const [socket, subscriptions] of this.#subscriptions) {
      for (const id of subscriptions.get(eventType) ?? []) {
        this.#send(socket, {
          id,
          type: 'event',
          event: { event_type: eventType, data, origin: 'LOCAL', time_fired: new Date().toISOString(), context: context() },
        });
      }
    }
  }

  #accept(socket: WebSocket): void {
    this.connections++;
    this.#sockets.add(socket);
    socket.on('close', () => {
      this.#sockets.delete(socket);
      this.#subscriptions.delete(socket);
    });
    let authenticated = false;
    let lastId = 0;
    this.#send(socket, { type: 'auth_required', ha_version: this.house.ha_version });
    socket.on('message', (data) => {
      let message: Payload;
      try {
        message = JSON.parse(String(data)) as Payload;
      } catch {
        socket.close(1000);
        return;
      }
      if (!authenticated) {
        this.received.push(String(message.type));
        if (message.type !== 'auth') {
          // HA drops a client that sends anything but auth first.
          socket.close(1000);
          return;
        }
        this.authAttempts++;
        if (message.access_token !== this.token) {
          this.#send(socket, { type: 'auth_invalid', message: 'Invalid access token or password' });
          socket.close(1000);
          return;
        }
        authenticated = true;
        this.#subscriptions.set(socket, new Map());
        this.#send(socket, { type: 'auth_ok', ha_version: this.house.ha_version });
        return;
      }
      this.received.push(String(message.type));
      const id = message.id;
      if (typeof id !== 'number' || typeof message.type !== 'string') {
        this.#send(socket, {
          id: null,
          type: 'result',
          success: false,
          error: { code: 'invalid_format', message: 'Message incorrectly formatted.' },
        });
        return;
      }
      if (id <= lastId) {
        this.#error(socket, id, 'id_reuse', 'Identifier values have to increase.');
        return;
      }
      lastId = id;
      this.#command(socket, id, message);
    });
  }

  #command(socket: WebSocket, id: number, message: Payload): unknown {
    switch (message.type) {
      case 'ping':
        if (this.answerPings) this.#send(socket, { id, type: 'pong' });
        return;
      case 'get_states':
        return this.#result(socket, id, this.house.states);
      case 'config/area_registry/list':
        return this.#result(socket, id, this.house.areas);
      case 'config/device_registry/list':
        return this.#result(socket, id, this.house.devices);
      case 'config/entity_registry/list':
        return this.#result(socket, id, this.house.entities);
      case 'homeassistant/expose_entity/list':
        if (!this.admin) return this.#error(socket, id, 'unauthorized', 'Unauthorized');
        return this.#result(socket, id, { exposed_entities: this.house.exposed });
      case 'subscribe_events': {
        const subscriptions = this.#subscriptions.get(socket);
        const type = typeof message.event_type === 'string' ? message.event_type : '*';
        subscriptions?.set(type, [...(subscriptions.get(type) ?? []), id]);
        return this.#result(socket, id, null);
      }
      case 'call_service':
        return this.#callService(socket, id, message);
      default:
        return this.#error(socket, id, 'unknown_command', 'Unknown command.');
    }
  }

  #callService(socket: WebSocket, id: number, message: Payload): unknown {
    const call: ServiceCall = {
      domain: message.domain,
      service: message.service,
      service_data: message.service_data,
      target: message.target,
    };
    this.calls.push(call);
    const failure = this.failures.get(`${call.domain}.${call.service}`);
    if (failure !== undefined) return this.#error(socket, id, failure.code, failure.message);
    const entityId = call.target?.entity_id;
    const current = typeof entityId === 'string' ? this.state(entityId) : undefined;
    if (current === undefined) return this.#error(socket, id, 'not_found', `Entity ${entityId} not found`);
    const data = call.service_data ?? {};
    const next = serviceResult(call.domain, call.service, current, data);
    if (next !== undefined) this.setState(entityId, next.state, next.attributes);
    this.#result(socket, id, { context: context(), response: null });
  }

  #result(socket: WebSocket, id: number, result: unknown): void {
    this.#send(socket, { id, type: 'result', success: true, result });
  }

  #error(socket: WebSocket, id: number, code: string, message: string): void {
    this.#send(socket, { id, type: 'result', success: false, error: { code, message } });
  }

  #send(socket: WebSocket, message: Payload): void {
    if (socket.readyState === 1) socket.send(JSON.stringify(message));
  }
}

/** The state an HA integration reports after a service. */
function serviceResult(
  domain: string,
  service: string,
  current: Payload,
  data: Payload,
): { state: string; attributes: Payload } | undefined {
  switch (`${domain}.${service}`) {
    case 'light.turn_on':
      return { state: 'on', attributes: { brightness: data.brightness ?? current.attributes.brightness ?? 255, color_mode: 'color_temp' } };
    case 'light.turn_off':
      return { state: 'off', attributes: { brightness: null, color_mode: null } };
    case 'switch.turn_on':
    case 'input_boolean.turn_on':
      return { state: 'on', attributes: {} };
    case 'switch.turn_off':
    case 'input_boolean.turn_off':
      return { state: 'off', attributes: {} };
    case 'lock.lock':
      return { state: 'locked', attributes: {} };
    case 'lock.unlock':
      return { state: 'unlocked', attributes: {} };
    case 'cover.open_cover':
      return { state: 'open', attributes: { current_position: 100 } };
    case 'cover.close_cover':
      return { state: 'closed', attributes: { current_position: 0 } };
    default:
      return undefined;
  }
}
