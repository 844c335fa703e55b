/**
 * What the automation tests share: a small in-memory stand-in for the entity registry that emits
 * entity.state_changed on the real EventBus like the registry does (with the context of the call
 * that caused a change), an IO recorder, and an AutomationEngine on a real SQLite file driven by a
 * ManualTimerClock.
 */
import { join } from 'node:path';
import type { Test } from 'tap';
import { AutomationEngine } from '../../../src/automation/automation-engine.js';
import type { AutomationEntities, AutomationIo, AutomationsSettings } from '../../../src/automation/types.js';
import type { AutomationRule } from '../../../src/config/schema.js';
import { EventBus, type EventMap } from '../../../src/events/event-bus.js';
import type { EntityContext, EntityDomain, EntityInfo, EntityState } from '../../../src/home/types.js';
import { HomeAgentError } from '../../../src/shared/errors.js';
import { ManagedDatabase } from '../../../src/store/database.js';
import { ManualTimerClock } from '../../helpers/manual-timer-clock.js';
import { type CapturedLogs, captureLogs } from '../fixtures/support.js';

export interface Call {
  entity_id: string;
  service: string;
  data: Record<string, unknown>;
  context: EntityContext;
}

/** Entities by id, name or alias; services switch states the way a simple device would. */
export class FakeEntities implements AutomationEntities {
  readonly calls: Call[] = [];
  readonly #entities = new Map<string, EntityInfo>();
  readonly #events: EventBus;
  readonly #clock: ManualTimerClock;
  /** Makes calls to an entity fail with this error. */
  readonly failing = new Map<string, HomeAgentError>();

  constructor(events: EventBus, clock: ManualTimerClock) {
    this.#events = events;
    this.#clock = clock;
  }

  add(entity_id: string, state: EntityState = null, extra: { name?: string; aliases?: string[] } = {}): void {
    const domain = entity_id.split('.')[0] as EntityDomain;
    const now = this.#clock.now();
    this.#entities.set(entity_id, {
      entity_id,
      domain,
      name: extra.name ?? entity_id,
      aliases: extra.aliases ?? [],
      area: null,
      device: null,
      state,
      attributes: {},
      unit: null,
      device_class: null,
      last_changed: now,
      last_updated: now,
      owner: 'test',
      critical: false,
      services: [],
      entity_category: null,
      state_class: null,
    });
    this.#events.emit('entity.registered', { entity_id, domain, owner: 'test' });
  }

  remove(entity_id: string): void {
    const entity = this.#entities.get(entity_id);
    if (!entity) throw new Error(`test: no entity ${entity_id}`);
    this.#entities.delete(entity_id);
    this.#events.emit('entity.removed', { entity_id, domain: entity.domain, owner: 'test' });
  }

  /** Reports a state; emits entity.state_changed when it changed (or when attributes are given). */
  set(entity_id: string, state: EntityState, context: EntityContext | null = null, attributes?: Record<string, unknown>): void {
    const entity = this.#entities.get(entity_id);
    if (!entity) throw new Error(`test: no entity ${entity_id}`);
    const old = entity.state;
    const changed = old !== state;
    if (!changed && attributes === undefined) return;
    entity.state = state;
    if (attributes) entity.attributes = { ...entity.attributes, ...attributes };
    const payload: EventMap['entity.state_changed'] = {
      entity_id,
      domain: entity.domain,
      old_state: old,
      new_state: state,
      state_changed: changed,
      attributes: entity.attributes,
      at: this.#clock.now(),
      context: context === null ? null : { ...context },
    };
    this.#events.emit('entity.state_changed', payload);
  }

  resolve(reference: string): EntityInfo {
    const byId = this.#entities.get(reference);
    if (byId) return byId;
    const wanted = reference.trim().toLowerCase();
    const found = [...this.#entities.values()].filter(
      (e) => e.name.toLowerCase() === wanted || e.aliases.some((a) => a.toLowerCase() === wanted),
    );
    if (found.length === 1) return found[0] as EntityInfo;
    if (found.length > 1)
      throw new HomeAgentError('HA_ERR_ENTITY_AMBIGUOUS', `${JSON.stringify(reference)} matches ${found.length} entities`);
    throw new HomeAgentError('HA_ERR_ENTITY_NOT_FOUND', `no entity is called ${JSON.stringify(reference)}`);
  }

  find(reference: string): EntityInfo | undefined {
    try {
      return this.resolve(reference);
    } catch {
      return undefined;
    }
  }

  async call(reference: string, service: string, data: Record<string, unknown>, context: EntityContext): Promise<EntityInfo> {
    const entity = this.resolve(reference);
    this.calls.push({ entity_id: entity.entity_id, service, data, context: { ...context } });
    const failure = this.failing.get(entity.entity_id);
    if (failure) throw failure;
    // The device answers a moment later, like a real one.
    await Promise.resolve();
    const next =
      service === 'turn_on'
        ? 'on'
        : service === 'turn_off'
          ? 'off'
          : service === 'toggle'
            ? entity.state === 'on'
              ? 'off'
              : 'on'
            : entity.state;
    this.set(entity.entity_id, service === 'set_value' ? (data.value as EntityState) : next, context);
    return entity;
  }
}

export interface IoRecord {
  kind: 'notify' | 'input';
  channel: string;
  text: string;
  level?: number;
  meta: Record<string, unknown>;
}

export function recordingIo(): AutomationIo & { sent: IoRecord[] } {
  const sent: IoRecord[] = [];
  return {
    sent,
    notify: async (channel, text, meta) => {
      sent.push({ kind: 'notify', channel, text, meta });
    },
    input: (channel, text, level, meta) => {
      sent.push({ kind: 'input', channel, text, level, meta });
    },
  };
}

/** A rule with the schema's defaults; tests give only what matters. */
export function rule(partial: Partial<AutomationRule> & Pick<AutomationRule, 'id' | 'triggers' | 'actions'>): AutomationRule {
  return { name: '', enabled: true, mode: 'restart', conditions: [], ...partial };
}

export const DEFAULT_SETTINGS: AutomationsSettings = {
  rules: [],
  max_runs_per_minute: 60,
  self_trigger_per_minute: 3,
  max_queued_runs: 10,
  run_history: 1000,
};

export interface EngineSetup {
  engine: AutomationEngine;
  entities: FakeEntities;
  events: EventBus;
  io: ReturnType<typeof recordingIo>;
  clock: ManualTimerClock;
  database: ManagedDatabase;
  logs: CapturedLogs;
  settings: AutomationsSettings;
  /** automation.run events, in order. */
  runs: Array<EventMap['automation.run']>;
  /** Log records of the automation subsystem at warn level. */
  warnings(): Array<Record<string, unknown>>;
  /** A second engine on the same database (after this one stopped). */
  restart(): Promise<AutomationEngine>;
}

export interface SetupOptions {
  settings?: Partial<AutomationsSettings>;
  /** Entities registered before the engine starts: id → state. */
  entities?: Record<string, EntityState>;
  clock?: ManualTimerClock;
  dir?: string;
  start?: boolean;
}

export async function startEngine(t: Test, rules: AutomationRule[], options: SetupOptions = {}): Promise<EngineSetup> {
  const dir = options.dir ?? t.testdir();
  const clock = options.clock ?? new ManualTimerClock();
  const logs = captureLogs('debug');
  const events = new EventBus(logs.logs.child('events'));
  const entities = new FakeEntities(events, clock);
  for (const [id, state] of Object.entries(options.entities ?? {})) entities.add(id, state);
  const io = recordingIo();
  const database = ManagedDatabase.open(
    { name: 'home', file: join(dir, 'home.db'), synchronous: 'NORMAL' },
    { busyTimeoutMs: 1000, startupCheck: 'off', log: logs.logs.child('store'), clock },
  );
  const settings: AutomationsSettings = { ...DEFAULT_SETTINGS, ...options.settings, rules };
  const make = () =>
    new AutomationEngine({
      entities,
      events,
      io,
      database: () => database,
      log: logs.logs.child('automation'),
      clock,
      settings: () => settings,
    });
  const engines: AutomationEngine[] = [];
  const runs: Array<EventMap['automation.run']> = [];
  events.on('test', 'automation.run', (e) => {
    runs.push(e);
  });
  const engine = make();
  engines.push(engine);
  if (options.start !== false) await engine.start(new AbortController().signal);
  t.teardown(async () => {
    for (const e of engines) await e.stop();
    database.close();
  });
  return {
    engine,
    entities,
    events,
    io,
    clock,
    database,
    logs,
    settings,
    runs,
    warnings: () => logs.records().filter((r) => r.subsystem === 'automation' && r.level === 'warn'),
    restart: async () => {
      const next = make();
      engines.push(next);
      await next.start(new AbortController().signal);
      return next;
    },
  };
}
