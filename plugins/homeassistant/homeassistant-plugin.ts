/**
 * The homeassistant plugin: Home Assistant's entities as HomeAgent entities, over HA's WebSocket
 * API with a long-lived token. On every (re)connection it subscribes to `state_changed` first (so
 * nothing changes unseen while it reads), then reads the area, device and entity registries, the
 * "exposed to Assist" list and every state, and brings the registry in line: new entities
 * registered, gone ones removed, the rest updated. Live changes follow from the subscription;
 * registry changes in HA (an entity renamed, moved, exposed) trigger a re-read. A HomeAgent service
 * call on such an entity becomes HA's `call_service`; HA's answering `state_changed` sets the state,
 * so what HomeAgent shows is always what HA says.
 *
 * While HA is away the entities stay registered and show `unavailable` (their last state is kept
 * for when it is back); a refused token stops reconnecting until the token setting changes.
 */
import { Type } from '@sinclair/typebox';
import type { HomeassistantStatus } from '../../src/sdk/api.js';
import {
  type EntityHandle,
  type EntityState,
  HomeAgentError,
  isHomeAgentError,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  STATE_UNAVAILABLE,
} from '../../src/sdk/index.js';
import {
  attributesOf,
  type HaEntityPlan,
  type HaRegistries,
  isExposed,
  planEntity,
  registriesOf,
  serviceCall,
  stateOf,
} from './entity-mapping.js';
import { type ConnectionClock, HaConnection } from './ha-connection.js';
import { type HaState, readAreas, readDevices, readEntityEntries, readExposedToAssist, readStateChanged, readStates } from './protocol.js';
import type { HomeassistantSettings } from './settings-schema.js';

export type { HomeassistantSettings };

/** Settings whose change reconnects (the others apply at the next sync). */
const CONNECTION_KEYS: ReadonlySet<string> = new Set(['url', 'token']);
const EXPOSURE_KEYS: ReadonlySet<string> = new Set(['expose', 'include', 'exclude', 'max_entities']);
/** HA's registry events come in bursts (an integration reloading): one re-read after the burst. */
const RESYNC_DEBOUNCE_MS = 2000;
/**
 * Events after which HA is read again: its registries changed, or it finished starting (a client
 * that connected while HA was still starting read a house with integrations missing).
 */
const RESYNC_EVENTS = ['entity_registry_updated', 'device_registry_updated', 'area_registry_updated', 'homeassistant_started'] as const;
/** Skipped entities listed in status (the count is always whole). */
const SKIPPED_SHOWN = 50;

export interface HomeassistantPluginOptions {
  clock?: ConnectionClock;
  random?: () => number;
}

interface LiveEntity {
  plan: HaEntityPlan;
  handle: EntityHandle;
  /** What HA said last (shown again when HA is back). */
  state: EntityState;
}

export class HomeassistantPlugin implements PluginInstance {
  readonly #ctx: PluginContext<HomeassistantSettings>;
  readonly #options: HomeassistantPluginOptions;
  readonly #undo: Array<() => void> = [];
  /** By HA entity id. */
  readonly #live = new Map<string, LiveEntity>();
  #connection: HaConnection | undefined;
  #settings: HomeassistantSettings | undefined;
  #registries: HaRegistries = registriesOf([], [], []);
  #assisted: Set<string> | undefined;
  #assistList: HomeassistantStatus['assist_list'] = 'not read yet';
  /** HA entity id → why it did not come in (a Map: a skipped entity's every state change must not add a line). */
  #skipped = new Map<string, string>();
  #stateSubscription: number | undefined;
  #registrySubscriptions = new Set<number>();
  #resyncTimer: { cancel(): void } | undefined;
  #syncing: Promise<void> | undefined;
  #lastSync: number | undefined;

  constructor(ctx: PluginContext<HomeassistantSettings>, options: HomeassistantPluginOptions = {}) {
    this.#ctx = ctx;
    this.#options = options;
  }

  /** The connection (tests look at its state). */
  get connection(): HaConnection | undefined {
    return this.#connection;
  }

  async start(): Promise<void> {
    this.#settings = readSettings(this.#ctx);
    this.#undo.push(this.#ctx.settings.onChange((key) => this.#onSetting(key)));
    this.#registerMethods();
    const connection = new HaConnection({
      settings: () => this.#current(),
      log: this.#ctx.log,
      ...(this.#options.clock ? { clock: this.#options.clock } : {}),
      ...(this.#options.random ? { random: this.#options.random } : {}),
      onReady: () => this.#onReady(),
      onEvent: (id, event) => this.#onEvent(id, event),
      onDown: () => this.#onDown(),
    });
    this.#connection = connection;
    if (configProblem(this.#current()) === undefined) connection.start();
    else this.#ctx.log.warn({}, `Home Assistant: ${configProblem(this.#current())}`);
  }

  async stop(): Promise<void> {
    for (const undo of this.#undo.splice(0).reverse()) undo();
    this.#resyncTimer?.cancel();
    this.#resyncTimer = undefined;
    await this.#connection?.stop();
    this.#connection = undefined;
    for (const live of this.#live.values()) live.handle.remove();
    this.#live.clear();
  }

  health(): Required<PluginHealth> {
    const settings = this.#current();
    const problem = configProblem(settings);
    if (problem !== undefined) return { ok: false, detail: problem, detail_zh: configProblemZh(settings) };
    const status = this.#connection?.status();
    if (status === undefined) {
      return { ok: false, detail: 'Home Assistant plugin not running', detail_zh: 'Home Assistant 插件没有运行' };
    }
    const n = this.#live.size;
    switch (status.state) {
      case 'ready': {
        const version = status.ha_version ?? '';
        return {
          ok: true,
          detail: `connected to Home Assistant ${version} at ${status.url}: ${n} entities`,
          detail_zh: `已连接 ${status.url} 上的 Home Assistant ${version}：${n} 个实体`,
        };
      }
      case 'auth_failed':
        return {
          ok: false,
          detail: `HA_ERR_HOMEASSISTANT_AUTH: Home Assistant refused the token (${status.last_error ?? ''}); set a new plugin.homeassistant.token`,
          detail_zh: `HA_ERR_HOMEASSISTANT_AUTH：Home Assistant 拒绝了令牌（${status.last_error ?? ''}）；请设置新的 plugin.homeassistant.token`,
        };
      default: {
        const nextS = status.next_attempt_in_ms === null ? undefined : Math.ceil(status.next_attempt_in_ms / 1000);
        const why = status.last_error ?? status.state;
        return {
          ok: false,
          detail: `not connected to Home Assistant at ${status.url}: ${why}${nextS === undefined ? '' : `; next attempt in ${nextS} s`}`,
          detail_zh: `未连接 ${status.url} 上的 Home Assistant：${why}${nextS === undefined ? '' : `；${nextS} s 后再试`}（${n} 个实体暂不可用）`,
        };
      }
    }
  }

  status(): HomeassistantStatus {
    const settings = this.#current();
    const connection = this.#connection?.status() ?? {
      state: 'stopped' as const,
      url: settings.url,
      ha_version: null,
      since: null,
      connections: 0,
      failed_attempts: 0,
      next_attempt_in_ms: null,
      last_error: null,
    };
    return {
      ...connection,
      ...(configProblem(settings) === undefined ? {} : { last_error: configProblem(settings) ?? null }),
      configured: configProblem(settings) === undefined,
      entities: this.#live.size,
      skipped: [...this.#skipped].slice(0, SKIPPED_SHOWN).map(([entity_id, reason]) => ({ entity_id, reason })),
      skipped_count: this.#skipped.size,
      assist_list: settings.expose === 'list' ? 'not used' : this.#assistList,
      last_sync: this.#lastSync === undefined ? null : new Date(this.#lastSync).toISOString(),
    };
  }

  /** Entity ids HomeAgent registered for HA's entities, sorted (tests and status). */
  get entityIds(): string[] {
    return [...this.#live.values()].map((l) => l.handle.entity_id).sort();
  }

  /** Reads HA again now (homeassistant.sync); resolves when done. */
  async sync(): Promise<HomeassistantStatus> {
    if (!this.#connection?.ready) {
      throw new HomeAgentError(
        'HA_ERR_HOMEASSISTANT_CONNECTION',
        `Home Assistant is not connected (${this.status().last_error ?? this.status().state})`,
      );
    }
    await this.#sync();
    return this.status();
  }

  #current(): HomeassistantSettings {
    this.#settings ??= readSettings(this.#ctx);
    return this.#settings;
  }

  #onSetting(key: string): void {
    this.#settings = readSettings(this.#ctx);
    const connection = this.#connection;
    if (connection === undefined) return;
    if (CONNECTION_KEYS.has(key)) {
      if (configProblem(this.#settings) !== undefined) {
        void connection.stop().then(() => this.#onDown());
        return;
      }
      this.#ctx.log.info({ key }, `plugin.homeassistant.${key} changed: reconnecting to Home Assistant`);
      if (connection.state === 'stopped') connection.start();
      else connection.retry();
    } else if (EXPOSURE_KEYS.has(key) && connection.ready) {
      this.#scheduleResync(0);
    }
  }

  // ---- connection events ----

  async #onReady(): Promise<void> {
    const connection = this.#connection;
    if (connection === undefined) return;
    this.#stateSubscription = undefined;
    this.#registrySubscriptions.clear();
    // Subscribing before reading: a change made while the states are read is not lost.
    this.#stateSubscription = await connection.subscribeEvents('state_changed');
    for (const event of RESYNC_EVENTS) this.#registrySubscriptions.add(await connection.subscribeEvents(event));
    await this.#sync();
  }

  #onDown(): void {
    this.#stateSubscription = undefined;
    this.#registrySubscriptions.clear();
    this.#resyncTimer?.cancel();
    this.#resyncTimer = undefined;
    // Kept registered (automations and intents still find them), shown as not answering.
    for (const live of this.#live.values()) this.#show(live, STATE_UNAVAILABLE);
  }

  #onEvent(id: number, event: unknown): void {
    if (this.#registrySubscriptions.has(id)) {
      this.#scheduleResync(RESYNC_DEBOUNCE_MS);
      return;
    }
    if (id !== this.#stateSubscription) return;
    const change = readStateChanged(event);
    if (change === undefined) {
      this.#ctx.log.debug({}, 'a state_changed event HomeAgent cannot read was ignored');
      return;
    }
    const live = this.#live.get(change.entity_id);
    if (change.new_state === null) {
      if (live !== undefined) {
        live.handle.remove();
        this.#live.delete(change.entity_id);
        this.#ctx.log.info({ entity_id: live.handle.entity_id }, `Home Assistant removed ${change.entity_id}`);
      }
      return;
    }
    if (live !== undefined) {
      this.#apply(live, change.new_state);
      return;
    }
    // A new entity (HA added it, or it was excluded until now): in when it qualifies and there is room.
    if (this.#syncing !== undefined || this.#skipped.has(change.entity_id)) return;
    if (!isExposed(change.entity_id, this.#current(), this.#assisted)) return;
    const max = this.#current().max_entities;
    if (this.#live.size >= max) {
      this.#skipped.set(change.entity_id, `over plugin.homeassistant.max_entities (${max})`);
      return;
    }
    this.#bringIn(change.new_state);
  }

  // ---- sync ----

  #scheduleResync(ms: number): void {
    this.#resyncTimer?.cancel();
    this.#resyncTimer = (this.#options.clock ?? defaultTimer).setTimer(() => {
      this.#resyncTimer = undefined;
      if (!this.#connection?.ready) return;
      this.#sync().catch((error) => this.#ctx.log.warn({ err: error }, 'reading Home Assistant again failed'));
    }, ms);
  }

  #sync(): Promise<void> {
    // One at a time: a registry event during a sync waits for it rather than racing it.
    const run = (this.#syncing ?? Promise.resolve()).then(() => this.#syncOnce());
    const tracked = run.finally(() => {
      if (this.#syncing === tracked) this.#syncing = undefined;
    });
    this.#syncing = tracked;
    return tracked;
  }

  async #syncOnce(): Promise<void> {
    const connection = this.#connection;
    if (connection === undefined) return;
    const settings = this.#current();
    const [areas, devices, entries] = await Promise.all([
      connection.command({ type: 'config/area_registry/list' }),
      connection.command({ type: 'config/device_registry/list' }),
      connection.command({ type: 'config/entity_registry/list' }),
    ]);
    this.#registries = registriesOf(readAreas(areas), readDevices(devices), readEntityEntries(entries));
    if (settings.expose === 'assist') await this.#readAssisted(connection);
    const { states, unreadable } = readStates(await connection.command({ type: 'get_states' }));
    if (unreadable > 0)
      this.#ctx.log.warn({ unreadable }, `Home Assistant: ${unreadable} state(s) without entity_id or state were ignored`);
    const wanted = new Map<string, HaState>();
    const skipped = new Map<string, string>();
    for (const state of states) {
      if (!isExposed(state.entity_id, settings, this.#assisted)) continue;
      if (wanted.size >= settings.max_entities) {
        skipped.set(state.entity_id, `over plugin.homeassistant.max_entities (${settings.max_entities})`);
        continue;
      }
      wanted.set(state.entity_id, state);
    }
    for (const [haId, live] of [...this.#live]) {
      if (wanted.has(haId)) continue;
      live.handle.remove();
      this.#live.delete(haId);
    }
    this.#skipped = skipped;
    for (const state of wanted.values()) this.#bringIn(state);
    this.#lastSync = Date.now();
    this.#ctx.log.info(
      { entities: this.#live.size, skipped: this.#skipped.size },
      `Home Assistant: ${this.#live.size} entities in, ${this.#skipped.size} skipped`,
    );
  }

  async #readAssisted(connection: HaConnection): Promise<void> {
    try {
      this.#assisted = readExposedToAssist(await connection.command({ type: 'homeassistant/expose_entity/list' }));
      this.#assistList = 'read';
    } catch (error) {
      if (!isHomeAgentError(error, 'HA_ERR_HOMEASSISTANT_COMMAND')) throw error;
      // HA answers this to administrators only: without it, include is the list.
      if (this.#assistList !== 'refused') {
        this.#ctx.log.warn(
          { err: error },
          "Home Assistant would not say which entities are exposed to Assist (the token's user is not an administrator?): only plugin.homeassistant.include comes in",
        );
      }
      this.#assisted = undefined;
      this.#assistList = 'refused';
    }
  }

  /** Registers or updates the entity for an HA state. */
  #bringIn(state: HaState): void {
    const plan = planEntity(state, this.#registries);
    if ('skip' in plan) {
      const old = this.#live.get(state.entity_id);
      if (old !== undefined) {
        old.handle.remove();
        this.#live.delete(state.entity_id);
      }
      this.#skipped.set(state.entity_id, plan.skip);
      return;
    }
    const old = this.#live.get(state.entity_id);
    if (old !== undefined && JSON.stringify(old.plan) === JSON.stringify(plan)) {
      this.#apply(old, state);
      return;
    }
    const value = stateOf(plan.domain, state.state);
    const handle = this.#register(plan, value, state, old);
    if (handle === undefined) return;
    if (old !== undefined && old.handle.entity_id !== handle.entity_id) old.handle.remove();
    this.#live.set(state.entity_id, { plan, handle, state: value });
    this.#skipped.delete(state.entity_id);
  }

  #register(plan: HaEntityPlan, value: EntityState, state: HaState, old: LiveEntity | undefined): EntityHandle | undefined {
    const definition = {
      domain: plan.domain,
      object_id: old?.handle.entity_id.slice(plan.domain.length + 1) ?? plan.object_id,
      name: plan.name,
      aliases: plan.aliases,
      area: plan.area,
      device: plan.device,
      unit: plan.unit,
      device_class: plan.device_class,
      entity_category: plan.entity_category,
      state_class: plan.state_class,
      services: plan.services,
      attributes: attributesOf(state),
      initial_state: value,
      ...(plan.services.length === 0
        ? {}
        : { call: (service: string, data: Record<string, unknown>) => this.#call(plan.ha_entity_id, service, data) }),
    };
    if (old !== undefined && old.plan.domain !== plan.domain) definition.object_id = plan.object_id;
    try {
      return this.#ctx.entities.register(definition);
    } catch (error) {
      if (!isHomeAgentError(error, 'HA_ERR_ENTITY_DEFINITION') || !/already registered by/.test(error.message)) {
        this.#skipped.set(plan.ha_entity_id, describe(error));
        return undefined;
      }
      // The id is HomeAgent's own (a GPIO light.kitchen): the HA one is told apart, not dropped.
      const objectId = `${plan.object_id.slice(0, 61)}_ha`;
      try {
        const handle = this.#ctx.entities.register({ ...definition, object_id: objectId });
        this.#ctx.log.info(
          { ha_entity_id: plan.ha_entity_id, entity_id: handle.entity_id },
          `${plan.domain}.${plan.object_id} is already another owner's: Home Assistant's ${plan.ha_entity_id} is ${handle.entity_id} here`,
        );
        return handle;
      } catch (second) {
        this.#skipped.set(plan.ha_entity_id, describe(second));
        return undefined;
      }
    }
  }

  #apply(live: LiveEntity, state: HaState): void {
    live.state = stateOf(live.plan.domain, state.state);
    this.#show(live, live.state, attributesOf(state));
  }

  #show(live: LiveEntity, value: EntityState, attributes?: Record<string, unknown>): void {
    try {
      live.handle.update(value, attributes);
    } catch (error) {
      this.#ctx.log.warn({ err: error, entity_id: live.handle.entity_id }, 'a Home Assistant state was refused by the registry');
    }
  }

  async #call(haEntityId: string, service: string, data: Record<string, unknown>): Promise<void> {
    const live = this.#live.get(haEntityId);
    const connection = this.#connection;
    if (live === undefined)
      throw new HomeAgentError('HA_ERR_ENTITY_UNAVAILABLE', `${haEntityId} is no longer brought in from Home Assistant`);
    if (connection === undefined || !connection.ready) {
      // Never queued: a light must not switch when HA comes back an hour later.
      throw new HomeAgentError(
        'HA_ERR_HOMEASSISTANT_CONNECTION',
        `Home Assistant is not connected: ${service} was not sent to ${haEntityId} (${this.status().last_error ?? this.status().state})`,
      );
    }
    const call = serviceCall(live.plan.ha_domain, service, data);
    this.#ctx.audit('homeassistant.call_service', { entity_id: haEntityId, domain: call.domain, service: call.service });
    await connection.command({
      type: 'call_service',
      domain: call.domain,
      service: call.service,
      ...(Object.keys(call.service_data).length === 0 ? {} : { service_data: call.service_data }),
      target: { entity_id: haEntityId },
    });
  }

  #registerMethods(): void {
    try {
      this.#undo.push(
        this.#ctx.control.register({
          name: 'homeassistant.status',
          description:
            'The Home Assistant connection (url, version, since when, last error, next attempt), the entities brought in and those skipped with why.',
          params: Type.Object({}, { additionalProperties: false }),
          handler: (): HomeassistantStatus => this.status(),
        }),
        this.#ctx.control.register({
          name: 'homeassistant.sync',
          description: "Reads Home Assistant's registries and states again now (after exposing entities in HA, for instance).",
          params: Type.Object({}, { additionalProperties: false }),
          handler: (): Promise<HomeassistantStatus> => this.sync(),
        }),
      );
    } catch (error) {
      if (!isHomeAgentError(error, 'HA_ERR_UNAVAILABLE')) throw error;
      this.#ctx.log.warn({ err: error }, 'control methods are not available in this daemon: `homeagentctl homeassistant` will not answer');
    }
  }
}

const defaultTimer: ConnectionClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref?.();
    return { cancel: () => clearTimeout(timer) };
  },
};

export function readSettings(ctx: PluginContext<HomeassistantSettings>): HomeassistantSettings {
  return ctx.settings.values();
}

/** What keeps the plugin from connecting, or undefined. */
export function configProblem(settings: HomeassistantSettings): string | undefined {
  const url = (settings.url ?? '').trim();
  if (!/^wss?:\/\//i.test(url) || !URL.canParse(url)) {
    return `HA_ERR_HOMEASSISTANT_CONFIG: plugin.homeassistant.url must be Home Assistant's ws:// or wss:// address (ws://homeassistant.local:8123/api/websocket)`;
  }
  if ((settings.token ?? '') === '') {
    return 'HA_ERR_HOMEASSISTANT_CONFIG: no plugin.homeassistant.token: create a long-lived access token in Home Assistant (your profile > Security)';
  }
  return undefined;
}

function configProblemZh(settings: HomeassistantSettings): string {
  const url = (settings.url ?? '').trim();
  if (!/^wss?:\/\//i.test(url) || !URL.canParse(url)) return 'plugin.homeassistant.url 必须是 Home Assistant 的 ws:// 或 wss:// 地址';
  return '未设置 plugin.homeassistant.token：请在 Home Assistant 个人资料 > 安全 中创建长期访问令牌';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
