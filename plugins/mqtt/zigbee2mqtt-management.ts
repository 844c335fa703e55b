/**
 * Managing a Zigbee2MQTT network through its bridge API: each request is JSON on
 * `<z2m>/bridge/request/<what>` carrying a `transaction` id, and Z2M answers on
 * `<z2m>/bridge/response/<what>` with `{data, status: "ok" | "error", error?, transaction}`.
 * HomeAgent uses: permit_join (`{value, time}`: 1.x reads value, 2.x time, both get both; time 0
 * closes), device/rename (`{from, to}`), device/remove (`{id, force}`), group/add
 * (`{friendly_name, id?}`), group/remove (`{id, force}`) and group/members/add|remove
 * (`{group, device, endpoint?}`). The retained `bridge/info` says whether joining is open (and, in
 * 2.x, until when), `bridge/groups` lists the groups.
 *
 * Requests are never queued: one made while the broker is away fails at once (opening the network
 * an hour later, when someone's neighbour pairs a bulb, is worse than an error). A request Z2M does
 * not answer in time fails with HA_ERR_ZIGBEE_TIMEOUT; one it refuses with HA_ERR_ZIGBEE_REQUEST
 * and Z2M's own wording. Every request is audited with its actor.
 *
 * The same operations are control methods (homeagentctl zigbee ..., owner callers only: pairing a
 * device into the house network or removing one is the owner's decision) and agent tools:
 * zigbee_permit_join and zigbee_rename are `act`, zigbee_remove `dangerous` (a removed device must
 * be paired again by hand), zigbee_devices `read` (availability and link quality as diagnostics).
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { PermitJoinState, Zigbee2MqttDeviceDiagnostics, ZigbeeGroup, ZigbeeManagementStatus } from '../../src/sdk/api.js';
import { type Caller, HomeAgentError, isHomeAgentError, type PluginContext, type ToolDefinition, ToolError } from '../../src/sdk/index.js';
import type { MqttLink, MqttMessage } from './types.js';
import type { Zigbee2MqttStatus } from './zigbee2mqtt-bridge.js';

export interface Zigbee2MqttManagementSettings {
  zigbee2mqtt_base_topic: string;
  zigbee2mqtt_request_timeout_ms: number;
  zigbee2mqtt_permit_join_max_s: number;
}

/** What management reads of the bridge (zigbee2mqtt-bridge.ts). */
export interface BridgeView {
  status(): Zigbee2MqttStatus;
  diagnostics(): Zigbee2MqttDeviceDiagnostics[];
  device(reference: string): { friendly_name: string; ieee_address: string } | undefined;
}

export interface ManagementClock {
  now(): number;
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

const systemClock: ManagementClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref?.();
    return { cancel: () => clearTimeout(timer) };
  },
};

export interface Zigbee2MqttManagementOptions {
  link: MqttLink;
  ctx: Pick<PluginContext, 'log' | 'audit' | 'tools' | 'control'>;
  settings: () => Zigbee2MqttManagementSettings;
  bridge: BridgeView;
  clock?: ManagementClock;
}

/** Z2M's answer to one request: its `data`. */
export type ZigbeeAnswer = Record<string, unknown>;

interface Pending {
  path: string;
  resolve(data: ZigbeeAnswer): void;
  reject(error: Error): void;
  timer: { cancel(): void };
}

/** A friendly name Z2M accepts and MQTT can carry: no wildcards or NUL, no topic-like endings. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is one of the characters refused.
const BAD_NAME = /[#+\u0000]|^\/|\/$|\/(set|get)(\/|$)|^\d+$/;
const MAX_NAME_CHARS = 128;

export class Zigbee2MqttManagement {
  readonly #o: Zigbee2MqttManagementOptions;
  readonly #clock: ManagementClock;
  readonly #pending = new Map<string, Pending>();
  readonly #undo: Array<() => void> = [];
  #root = '';
  #seq = 0;
  readonly #prefix = randomBytes(3).toString('hex');
  #groups: ZigbeeGroup[] = [];
  /** bridge/info's permit_join, and its end (2.x permit_join_end, epoch ms). */
  #infoOpen: boolean | undefined;
  #infoEnd: number | undefined;
  /** When HomeAgent opened joining: until when and for whom (cleared by its own timer). */
  #opened: { until: number; by: string } | undefined;
  #openedTimer: { cancel(): void } | undefined;

  constructor(options: Zigbee2MqttManagementOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
  }

  async start(): Promise<void> {
    this.#root = this.#o.settings().zigbee2mqtt_base_topic.replace(/\/+$/, '');
    const link = this.#o.link;
    this.#undo.push(
      link.subscribe(`${this.#root}/bridge/response/#`, 1, (m) => this.#onResponse(m)),
      link.subscribe(`${this.#root}/bridge/info`, 1, (m) => this.#onInfo(m)),
      link.subscribe(`${this.#root}/bridge/groups`, 1, (m) => this.#onGroups(m)),
    );
    for (const tool of this.#tools()) this.#undo.push(this.#o.ctx.tools.register(tool));
    this.#registerMethods();
  }

  async stop(): Promise<void> {
    for (const undo of this.#undo.splice(0).reverse()) undo();
    this.#openedTimer?.cancel();
    this.#openedTimer = undefined;
    this.#opened = undefined;
    for (const [id, pending] of [...this.#pending]) {
      this.#pending.delete(id);
      pending.timer.cancel();
      pending.reject(new HomeAgentError('HA_ERR_ZIGBEE_UNAVAILABLE', 'the MQTT plugin stopped before Zigbee2MQTT answered'));
    }
  }

  status(): ZigbeeManagementStatus {
    return {
      bridge: this.#o.bridge.status().bridge,
      permit_join: this.permitJoinState(),
      devices: this.#o.bridge.diagnostics(),
      groups: this.#groups.map((g) => ({ ...g, members: g.members.map((m) => ({ ...m })) })),
    };
  }

  permitJoinState(): PermitJoinState {
    const now = this.#clock.now();
    const own = this.#opened !== undefined && this.#opened.until > now ? this.#opened : undefined;
    const end = this.#infoEnd ?? own?.until;
    const open = this.#infoOpen ?? own !== undefined;
    const remaining = open && end !== undefined ? Math.max(0, Math.ceil((end - now) / 1000)) : null;
    return {
      open,
      until: open && end !== undefined ? new Date(end).toISOString() : null,
      remaining_s: remaining,
      opened_by: open ? (own?.by ?? null) : null,
    };
  }

  // ---- operations ----

  /** Opens joining for `seconds` (clamped to plugin.mqtt.zigbee2mqtt_permit_join_max_s), or closes it with 0. */
  async permitJoin(seconds: number, actor: string, device?: string): Promise<PermitJoinState> {
    const max = this.#o.settings().zigbee2mqtt_permit_join_max_s;
    const time = Math.max(0, Math.min(max, Math.round(seconds)));
    const payload: Record<string, unknown> = { value: time > 0, time };
    if (device !== undefined) payload.device = this.#known(device).friendly_name;
    await this.#request('permit_join', payload, actor);
    this.#openedTimer?.cancel();
    this.#openedTimer = undefined;
    if (time > 0) {
      this.#opened = { until: this.#clock.now() + time * 1000, by: actor };
      this.#infoOpen = true;
      this.#infoEnd = this.#opened.until;
      // Z2M closes joining itself; this only keeps HomeAgent's view right if bridge/info says nothing.
      this.#openedTimer = this.#clock.setTimer(() => {
        this.#openedTimer = undefined;
        this.#opened = undefined;
        if (this.#infoEnd !== undefined && this.#infoEnd <= this.#clock.now()) {
          this.#infoOpen = false;
          this.#infoEnd = undefined;
        }
      }, time * 1000);
    } else {
      this.#opened = undefined;
      this.#infoOpen = false;
      this.#infoEnd = undefined;
    }
    return this.permitJoinState();
  }

  async rename(from: string, to: string, actor: string): Promise<ZigbeeAnswer> {
    const device = this.#known(from);
    const name = checkName(to, 'to');
    return this.#request('device/rename', { from: device.friendly_name, to: name }, actor);
  }

  async remove(reference: string, force: boolean, actor: string): Promise<ZigbeeAnswer> {
    const device = this.#known(reference);
    return this.#request('device/remove', { id: device.friendly_name, force }, actor);
  }

  async groupAdd(name: string, actor: string, id?: number): Promise<ZigbeeAnswer> {
    const payload: Record<string, unknown> = { friendly_name: checkName(name, 'group') };
    if (id !== undefined) payload.id = id;
    return this.#request('group/add', payload, actor);
  }

  async groupRemove(group: string, force: boolean, actor: string): Promise<ZigbeeAnswer> {
    return this.#request('group/remove', { id: this.#knownGroup(group), force }, actor);
  }

  async groupMember(
    action: 'add' | 'remove',
    group: string,
    device: string,
    actor: string,
    endpoint?: string | number,
  ): Promise<ZigbeeAnswer> {
    const payload: Record<string, unknown> = { group: this.#knownGroup(group), device: this.#known(device).friendly_name };
    if (endpoint !== undefined) payload.endpoint = endpoint;
    return this.#request(`group/members/${action}`, payload, actor);
  }

  // ---- requests and responses ----

  async #request(path: string, payload: Record<string, unknown>, actor: string): Promise<ZigbeeAnswer> {
    const link = this.#o.link;
    if (!link.connected) {
      throw new HomeAgentError('HA_ERR_ZIGBEE_UNAVAILABLE', `the MQTT broker is not connected: ${path} was not sent to Zigbee2MQTT`);
    }
    if (this.#o.bridge.status().bridge === 'offline') {
      throw new HomeAgentError('HA_ERR_ZIGBEE_UNAVAILABLE', `Zigbee2MQTT says it is offline (bridge/state): ${path} was not sent`);
    }
    const transaction = `homeagent-${this.#prefix}-${++this.#seq}`;
    const timeoutMs = this.#o.settings().zigbee2mqtt_request_timeout_ms;
    this.#o.ctx.audit(`zigbee2mqtt.${path.replaceAll('/', '_')}`, { ...payload, actor });
    const answer = new Promise<ZigbeeAnswer>((resolve, reject) => {
      const timer = this.#clock.setTimer(() => {
        this.#pending.delete(transaction);
        reject(
          new HomeAgentError(
            'HA_ERR_ZIGBEE_TIMEOUT',
            `Zigbee2MQTT did not answer ${path} within ${timeoutMs} ms (is it running on ${this.#root}/? bridge is ${this.#o.bridge.status().bridge})`,
          ),
        );
      }, timeoutMs);
      this.#pending.set(transaction, { path, resolve, reject, timer });
    });
    try {
      // QoS 1, never retained: a retained request would run again whenever Z2M restarts.
      await link.publish(`${this.#root}/bridge/request/${path}`, JSON.stringify({ ...payload, transaction }), { qos: 1, retain: false });
    } catch (error) {
      const pending = this.#pending.get(transaction);
      this.#pending.delete(transaction);
      pending?.timer.cancel();
      answer.catch(() => undefined);
      throw error;
    }
    const data = await answer;
    this.#o.ctx.log.info({ path, actor }, `Zigbee2MQTT ${path}: done`);
    return data;
  }

  #onResponse(message: MqttMessage): void {
    const path = message.topic.slice(`${this.#root}/bridge/response/`.length);
    let response: unknown;
    try {
      response = JSON.parse(message.payload.toString('utf8'));
    } catch {
      this.#o.ctx.log.debug({ topic: message.topic }, 'a Zigbee2MQTT response that is not JSON was ignored');
      return;
    }
    if (!isRecord(response)) return;
    const pending = this.#match(path, response.transaction);
    if (pending === undefined) return;
    const [transaction, entry] = pending;
    this.#pending.delete(transaction);
    entry.timer.cancel();
    if (response.status === 'ok') entry.resolve(isRecord(response.data) ? response.data : {});
    else {
      const why = typeof response.error === 'string' && response.error !== '' ? response.error : 'no reason given';
      entry.reject(new HomeAgentError('HA_ERR_ZIGBEE_REQUEST', `Zigbee2MQTT refused ${path}: ${why.slice(0, 500)}`));
    }
  }

  /** The pending request a response answers: by transaction; without one (an old Z2M), the only one of that kind. */
  #match(path: string, transaction: unknown): [string, Pending] | undefined {
    if (typeof transaction === 'string') {
      const entry = this.#pending.get(transaction);
      return entry !== undefined && entry.path === path ? [transaction, entry] : undefined;
    }
    const candidates = [...this.#pending].filter(([, p]) => p.path === path);
    return candidates.length === 1 ? candidates[0] : undefined;
  }

  #onInfo(message: MqttMessage): void {
    let info: unknown;
    try {
      info = JSON.parse(message.payload.toString('utf8'));
    } catch {
      return;
    }
    if (!isRecord(info) || typeof info.permit_join !== 'boolean') return;
    this.#infoOpen = info.permit_join;
    if (!info.permit_join) this.#infoEnd = undefined;
    else if (typeof info.permit_join_end === 'number') this.#infoEnd = info.permit_join_end;
    else if (typeof info.permit_join_timeout === 'number') this.#infoEnd = this.#clock.now() + info.permit_join_timeout * 1000;
  }

  #onGroups(message: MqttMessage): void {
    let list: unknown;
    try {
      list = JSON.parse(message.payload.toString('utf8'));
    } catch {
      return;
    }
    if (!Array.isArray(list)) return;
    this.#groups = list.flatMap((g) =>
      isRecord(g) && typeof g.id === 'number' && typeof g.friendly_name === 'string'
        ? [
            {
              id: g.id,
              friendly_name: g.friendly_name,
              members: (Array.isArray(g.members) ? g.members : []).flatMap((m) =>
                isRecord(m) && typeof m.ieee_address === 'string'
                  ? [{ ieee_address: m.ieee_address, endpoint: typeof m.endpoint === 'number' ? m.endpoint : null }]
                  : [],
              ),
            },
          ]
        : [],
    );
  }

  /** A device of the list by friendly name or IEEE address; HA_ERR_ZIGBEE_REQUEST naming a few known ones otherwise. */
  #known(reference: string): { friendly_name: string; ieee_address: string } {
    const device = this.#o.bridge.device(reference);
    if (device !== undefined) return device;
    const names = this.#o.bridge
      .diagnostics()
      .slice(0, 10)
      .map((d) => d.friendly_name);
    throw new HomeAgentError(
      'HA_ERR_ZIGBEE_REQUEST',
      `no Zigbee2MQTT device ${JSON.stringify(reference)}${names.length === 0 ? ' (the device list is empty or not received yet)' : `; known: ${names.join(', ')}`}`,
    );
  }

  /** A group by name or id as Z2M takes it (the name when known, else the reference as given). */
  #knownGroup(reference: string): string | number {
    const group = this.#groups.find((g) => g.friendly_name.toLowerCase() === reference.toLowerCase() || String(g.id) === reference);
    if (group !== undefined) return group.friendly_name;
    if (this.#groups.length > 0) {
      throw new HomeAgentError(
        'HA_ERR_ZIGBEE_REQUEST',
        `no Zigbee2MQTT group ${JSON.stringify(reference)}; known: ${this.#groups.map((g) => g.friendly_name).join(', ')}`,
      );
    }
    return reference;
  }

  // ---- control methods and tools ----

  #registerMethods(): void {
    const control = this.#o.ctx.control;
    const actor = (caller: Caller) => caller.actor;
    const Name = Type.String({ minLength: 1, maxLength: MAX_NAME_CHARS });
    try {
      this.#undo.push(
        control.register({
          name: 'mqtt.zigbee_status',
          description:
            'Zigbee2MQTT: the bridge, whether joining is open and until when, every device with availability, link quality and last seen, and the groups.',
          params: Type.Object({}, { additionalProperties: false }),
          handler: (): ZigbeeManagementStatus => this.status(),
        }),
        control.register({
          name: 'mqtt.zigbee_permit_join',
          description:
            'Lets new Zigbee devices join for SECONDS (0 closes; at most plugin.mqtt.zigbee2mqtt_permit_join_max_s); answers the owner only; audited.',
          owner_only: true,
          params: Type.Object(
            { seconds: Type.Integer({ minimum: 0, maximum: 254 }), device: Type.Optional(Name) },
            { additionalProperties: false },
          ),
          handler: (p, caller): Promise<PermitJoinState> => this.permitJoin(p.seconds, actor(caller), p.device),
        }),
        control.register({
          name: 'mqtt.zigbee_rename',
          description: 'Renames a Zigbee2MQTT device (its entity ids follow the new name); answers the owner only; audited.',
          owner_only: true,
          params: Type.Object({ from: Name, to: Name }, { additionalProperties: false }),
          handler: (p, caller) => this.rename(p.from, p.to, actor(caller)),
        }),
        control.register({
          name: 'mqtt.zigbee_remove',
          description:
            'Removes a device from the Zigbee network (force: drop it from Z2M even if it does not answer); answers the owner only; audited.',
          owner_only: true,
          params: Type.Object({ device: Name, force: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
          handler: (p, caller) => this.remove(p.device, p.force === true, actor(caller)),
        }),
        control.register({
          name: 'mqtt.zigbee_group',
          description:
            'Zigbee2MQTT groups: add (a new group), remove, members_add, members_remove (a device to or from a group); answers the owner only; audited.',
          owner_only: true,
          params: Type.Object(
            {
              action: Type.Union([
                Type.Literal('add'),
                Type.Literal('remove'),
                Type.Literal('members_add'),
                Type.Literal('members_remove'),
              ]),
              group: Name,
              device: Type.Optional(Name),
              id: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
              endpoint: Type.Optional(
                Type.Union([Type.Integer({ minimum: 1, maximum: 255 }), Type.String({ minLength: 1, maxLength: 32 })]),
              ),
              force: Type.Optional(Type.Boolean()),
            },
            { additionalProperties: false },
          ),
          handler: (p, caller) => {
            if (p.action === 'add') return this.groupAdd(p.group, actor(caller), p.id);
            if (p.action === 'remove') return this.groupRemove(p.group, p.force === true, actor(caller));
            if (p.device === undefined) {
              throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `${p.action} needs the device to put in or take out of the group`);
            }
            return this.groupMember(p.action === 'members_add' ? 'add' : 'remove', p.group, p.device, actor(caller), p.endpoint);
          },
        }),
      );
    } catch (error) {
      if (!isHomeAgentError(error, 'HA_ERR_UNAVAILABLE')) throw error;
      this.#o.ctx.log.warn({ err: error }, 'control methods are not available in this daemon: `homeagentctl zigbee` will not answer');
    }
  }

  /** Arguments are checked against `parameters` before `execute` runs. */
  #tools(): Array<Omit<ToolDefinition, 'owner'>> {
    const agent = (source: string) => `agent (${source})`;
    return [
      {
        name: 'zigbee_devices',
        description:
          'Zigbee2MQTT devices with availability (online/offline), link quality (0-255, below ~30 is weak) and last seen, whether joining is open, and the groups. 查看 Zigbee 设备的在线状态和信号强度。',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
        tier: 'read',
        parallel_safe: true,
        execute: () => this.status(),
      },
      {
        name: 'zigbee_permit_join',
        description:
          'Opens the Zigbee network so a new device can pair, for `seconds` (default 120, at most 254; 0 closes it early). Zigbee2MQTT closes it by itself when the time is up. 允许新的 Zigbee 设备入网（配对）。',
        parameters: {
          type: 'object',
          properties: { seconds: { type: 'integer', minimum: 0, maximum: 254, description: 'How long joining stays open; 0 closes it.' } },
          additionalProperties: false,
        },
        tier: 'act',
        execute: (args, context) =>
          this.#asTool(() => this.permitJoin(typeof args.seconds === 'number' ? args.seconds : 120, agent(context.source))),
      },
      {
        name: 'zigbee_rename',
        description:
          'Renames a Zigbee2MQTT device (friendly name or IEEE address → new name; use area/name, e.g. "kitchen/ceiling", to place it in an area). Its entity ids change with the name. 重命名 Zigbee 设备。',
        parameters: {
          type: 'object',
          properties: {
            from: { type: 'string', minLength: 1, maxLength: MAX_NAME_CHARS, description: 'The current friendly name or IEEE address.' },
            to: { type: 'string', minLength: 1, maxLength: MAX_NAME_CHARS, description: 'The new friendly name.' },
          },
          required: ['from', 'to'],
          additionalProperties: false,
        },
        tier: 'act',
        execute: (args, context) => this.#asTool(() => this.rename(String(args.from), String(args.to), agent(context.source))),
      },
      {
        name: 'zigbee_remove',
        description:
          'Removes a device from the Zigbee network; it must be paired again to come back. `force` drops it from Zigbee2MQTT even when it does not answer. Needs the owner’s approval. 从 Zigbee 网络中移除设备（需要主人确认）。',
        parameters: {
          type: 'object',
          properties: {
            device: { type: 'string', minLength: 1, maxLength: MAX_NAME_CHARS, description: 'Friendly name or IEEE address.' },
            force: { type: 'boolean', description: 'Remove it even if it does not answer.' },
          },
          required: ['device'],
          additionalProperties: false,
        },
        tier: 'dangerous',
        execute: (args, context) => this.#asTool(() => this.remove(String(args.device), args.force === true, agent(context.source))),
      },
    ];
  }

  /** A failure as the model reads it (a tool never throws past the loop with a HomeAgentError). */
  async #asTool<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (!isHomeAgentError(error)) throw error;
      const reason =
        error.code === 'HA_ERR_ZIGBEE_TIMEOUT'
          ? 'timeout'
          : error.code === 'HA_ERR_ZIGBEE_UNAVAILABLE'
            ? 'unavailable'
            : error.message.startsWith('no Zigbee2MQTT device')
              ? 'not_found'
              : 'failed';
      throw new ToolError({
        reason,
        detail: error.message,
        ...(reason === 'not_found' ? { hint: 'call zigbee_devices for the names' } : {}),
      });
    }
  }
}

/** A new friendly name, or HA_ERR_ZIGBEE_REQUEST saying what is wrong with it. */
function checkName(name: string, field: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > MAX_NAME_CHARS || BAD_NAME.test(trimmed)) {
    throw new HomeAgentError(
      'HA_ERR_ZIGBEE_REQUEST',
      `${field} ${JSON.stringify(name)} is not a name Zigbee2MQTT can use: 1-${MAX_NAME_CHARS} characters, no # or +, not only digits, not starting or ending with /, no /set or /get`,
    );
  }
  return trimmed;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
