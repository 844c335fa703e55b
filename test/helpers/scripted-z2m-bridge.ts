/**
 * A scripted Zigbee2MQTT bridge for tests: a plain MQTT client that holds the retained device list
 * (test/unit/plugins/mqtt/fixtures/z2m-bridge-devices.json, real Z2M 1.x/2.x shapes), groups and bridge/info, takes
 * bridge/request/<what> and answers bridge/response/<what> with the request's transaction, refusing
 * what Z2M refuses (an unknown device, a missing time, a sleepy device removed without force) or
 * staying silent. Used by the mqtt plugin's management tests and the web page's Zigbee panel test.
 */
import { readFileSync } from 'node:fs';
import type { connectTestLink } from './mqtt-test-broker.js';

export const Z2M_BASE = 'zigbee2mqtt';
const BASE = Z2M_BASE;
export const Z2M_DEVICES = JSON.parse(
  readFileSync(new URL('../unit/plugins/mqtt/fixtures/z2m-bridge-devices.json', import.meta.url), 'utf8'),
) as Array<Record<string, unknown>>;
const DEVICES = Z2M_DEVICES;

export type TestLink = Awaited<ReturnType<typeof connectTestLink>>;
type Json = Record<string, unknown>;

/** Zigbee2MQTT's bridge API as far as management can tell. */
export class ScriptedBridge {
  readonly requests: Array<{ path: string; payload: Json }> = [];
  devices: Json[] = structuredClone(DEVICES);
  groups: Json[] = [{ id: 1, friendly_name: 'living_room_lights', members: [], scenes: [] }];
  /** Requests it takes without answering (a Z2M that hangs). */
  readonly silent = new Set<string>();
  /** Devices that do not answer a leave request (asleep): removing them needs force. */
  readonly sleepy = new Set<string>(['bathroom/climate']);
  /** Answers without the transaction field, like Z2M before 1.17. */
  legacy = false;

  constructor(readonly link: TestLink) {
    link.subscribe(`${BASE}/bridge/request/#`, 1, (message) => {
      const path = message.topic.slice(`${BASE}/bridge/request/`.length);
      const payload = JSON.parse(message.payload.toString('utf8')) as Json;
      this.requests.push({ path, payload });
      if (this.silent.has(path)) return;
      void this.#answer(path, payload);
    });
  }

  async publishAll(): Promise<void> {
    await this.link.publish(`${BASE}/bridge/state`, JSON.stringify({ state: 'online' }), { qos: 1, retain: true });
    await this.info(false);
    await this.publishDevices();
    await this.publishGroups();
    await this.link.publish(`${BASE}/Front door/availability`, JSON.stringify({ state: 'offline' }), { qos: 1, retain: true });
  }

  /** A device's state message (Z2M sends one after each report). */
  state(name: string, state: Json): Promise<void> {
    return this.link.publish(`${BASE}/${name}`, JSON.stringify(state), { qos: 1 });
  }

  publishDevices(): Promise<void> {
    return this.link.publish(`${BASE}/bridge/devices`, JSON.stringify(this.devices), { qos: 1, retain: true });
  }

  publishGroups(): Promise<void> {
    return this.link.publish(`${BASE}/bridge/groups`, JSON.stringify(this.groups), { qos: 1, retain: true });
  }

  info(open: boolean, end?: number): Promise<void> {
    const info: Json = {
      version: '2.6.3',
      coordinator: { type: 'zStack3x0' },
      permit_join: open,
      ...(end === undefined ? {} : { permit_join_end: end }),
    };
    return this.link.publish(`${BASE}/bridge/info`, JSON.stringify(info), { qos: 1, retain: true });
  }

  #device(id: unknown): Json | undefined {
    return this.devices.find((d) => d.friendly_name === id || d.ieee_address === id);
  }

  async #answer(path: string, payload: Json): Promise<void> {
    const ok = (data: Json) => this.#respond(path, payload, { data, status: 'ok' });
    const fail = (error: string) => this.#respond(path, payload, { data: {}, status: 'error', error });
    switch (path) {
      case 'permit_join': {
        if (typeof payload.time !== 'number') return fail('Invalid payload');
        await this.info(payload.time > 0, payload.time > 0 ? Date.now() + payload.time * 1000 : undefined);
        return ok({ time: payload.time });
      }
      case 'device/rename': {
        const device = this.#device(payload.from);
        if (device === undefined) return fail(`Device '${String(payload.from)}' does not exist`);
        const old = device.friendly_name;
        device.friendly_name = payload.to;
        await this.publishDevices();
        // Z2M clears the old name's retained state.
        await this.link.publish(`${BASE}/${String(old)}`, '', { qos: 1, retain: true });
        return ok({ from: old, to: payload.to, homeassistant_rename: false });
      }
      case 'device/remove': {
        const device = this.#device(payload.id);
        if (device === undefined) return fail(`Device '${String(payload.id)}' does not exist`);
        if (this.sleepy.has(String(device.friendly_name)) && payload.force !== true) {
          return fail(
            `Failed to remove device '${String(device.friendly_name)}' (block: false, force: false) (Error: AREQ - ZDO - mgmtLeaveRsp after 10000ms)`,
          );
        }
        this.devices = this.devices.filter((d) => d !== device);
        await this.publishDevices();
        return ok({ id: device.friendly_name, block: false, force: payload.force === true });
      }
      case 'group/add': {
        if (this.groups.some((g) => g.friendly_name === payload.friendly_name))
          return fail(`friendly_name '${String(payload.friendly_name)}' is already in use`);
        const id = typeof payload.id === 'number' ? payload.id : Math.max(0, ...this.groups.map((g) => Number(g.id))) + 1;
        this.groups.push({ id, friendly_name: payload.friendly_name, members: [], scenes: [] });
        await this.publishGroups();
        return ok({ friendly_name: payload.friendly_name, id });
      }
      case 'group/remove': {
        const before = this.groups.length;
        this.groups = this.groups.filter((g) => g.friendly_name !== payload.id && g.id !== payload.id);
        if (this.groups.length === before) return fail(`Group '${String(payload.id)}' does not exist`);
        await this.publishGroups();
        return ok({ id: payload.id, force: payload.force === true });
      }
      case 'group/members/add':
      case 'group/members/remove': {
        const group = this.groups.find((g) => g.friendly_name === payload.group);
        if (group === undefined) return fail(`Group '${String(payload.group)}' does not exist`);
        const device = this.#device(payload.device);
        if (device === undefined) return fail(`Device '${String(payload.device)}' does not exist`);
        const members = group.members as Json[];
        group.members = path.endsWith('add')
          ? [...members, { ieee_address: device.ieee_address, endpoint: 1 }]
          : members.filter((m) => m.ieee_address !== device.ieee_address);
        await this.publishGroups();
        return ok({ device: payload.device, group: payload.group });
      }
      default:
        return fail(`Request '${path}' is not supported`);
    }
  }

  #respond(path: string, request: Json, response: Json): Promise<void> {
    const body = this.legacy || request.transaction === undefined ? response : { ...response, transaction: request.transaction };
    return this.link.publish(`${BASE}/bridge/response/${path}`, JSON.stringify(body), { qos: 1 });
  }
}
