/**
 * The entity registry: the one place device state is read and changed. Drivers and plugins
 * register entities and report their state through the handle they get back; the agent, intents,
 * automations, MQTT and the web page list, resolve and call them here. Every state change is
 * announced as `entity.state_changed`, carrying the context of the service call that caused it (so
 * an automation can recognise its own doing), and persisted (entities row + a raw history row).
 *
 * A report is on the fast path (a GPIO edge → update → event within about 2 ms), so the database
 * is written behind: update() changes the entity in memory and emits at once, and the rows wait
 * in the {@link EntityWriteQueue} (entity-write-queue.ts says when it writes, how a refused write
 * is retried and what a crash loses). Every read of the database (history(), maintain()) and stop()
 * write the queue first, so a caller never misses its own write (register() restoring a stored
 * state takes a waiting row from the queue).
 *
 * A report that changes nothing only touches last_updated in memory (written with the next
 * change, a removal or the registry's stop), so a sensor repeating its value writes nothing.
 *
 * The owner may rename an entity, move it to another area and add or remove aliases
 * ({@link EntityRegistry.customize}). Those overrides live in their own table and are applied over
 * whatever the driver registers, at every registration: the driver's values stay the defaults, and
 * clearing an override brings the driver's value back. They are written at once (not behind):
 * they are rare, and an owner's edit must not be lost to a crash.
 */
import type { EventBus } from '../events/event-bus.js';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../shared/clock.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { Service } from '../shared/service.js';
import type { ManagedDatabase } from '../store/database.js';
import type { SqlDatabase, SqlStatement } from '../store/types.js';
import { type HistoryRules, historyStatistics, maintainHistory } from './entity-history.js';
import { areaSlug, findArea, resolveEntity } from './entity-resolver.js';
import { validateServiceData } from './entity-services.js';
import {
  EntityWriteQueue,
  type FlushReport,
  type PendingHistory,
  type QueuedEntity,
  type WriteBehindLimits,
} from './entity-write-queue.js';
import { openHomeDatabase } from './home-schema.js';
import {
  type Area,
  CRITICAL_DOMAINS,
  DOMAIN_SERVICES,
  defaultStateClass,
  ENTITY_CATEGORIES,
  ENTITY_DOMAINS,
  type EntityCategory,
  type EntityContext,
  type EntityDefinition,
  type EntityDomain,
  type EntityFilter,
  type EntityHandle,
  type EntityInfo,
  type EntityOverrides,
  type EntityState,
  STATE_CLASSES,
  STATE_UNAVAILABLE,
  type StateClass,
  type StateHistoryRow,
} from './types.js';

/** core.home as the registry reads it (on every use, so changes apply without a restart). */
export interface HomeSettings extends HistoryRules {
  areas: Area[];
  maintenance_interval_ms: number;
}

export interface EntityRegistryOptions {
  /** The `home` database (<data>/home.db), asked for on first use (the store opens it at start) and migrated then. */
  database: () => ManagedDatabase;
  events: EventBus;
  log: Logger;
  clock: Clock;
  settings: () => HomeSettings;
  /** Overrides of the write-behind limits (tests, benchmarks); see {@link WRITE_BEHIND_DEFAULTS}. */
  writeBehind?: Partial<WriteBehindLimits>;
  /** Called after each stored batch, with what it held (tests and benchmarks observe the transactions). */
  onFlush?: (report: FlushReport) => void;
}

export interface HistoryOptions {
  /** Epoch ms, inclusive; default `to` minus 24 hours. */
  from?: number;
  /** Epoch ms, inclusive; default now. */
  to?: number;
  /** Rows at most (the newest of the range); default 1000, at most 10000. */
  limit?: number;
}

export const DEFAULT_HISTORY_LIMIT = 1000;
export const MAX_HISTORY_LIMIT = 10_000;
const DAY_MS = 86_400_000;
const OBJECT_ID = /^[a-z0-9_]{1,64}$/;
const MAX_NAME_CHARS = 128;
const MAX_ALIASES = 16;

/**
 * A change the owner makes to an entity. Each field absent leaves that part as it is; `name: null`
 * and `area: undefined` with `reset_area` bring the driver's value back.
 */
export interface EntityCustomization {
  /** A new name, or null for the driver's again. */
  name?: string | null;
  /** A new area (id, name or alias of a configured one, or a new name), or null for none. */
  area?: string | null;
  /** The driver's area again (wins over `area`). */
  reset_area?: boolean;
  add_aliases?: string[];
  remove_aliases?: string[];
  /** Back to the driver's aliases (before add/remove of the same change). */
  reset_aliases?: boolean;
  /** Exactly these aliases (the page's dialog sends the whole list); applied before add/remove. */
  aliases?: string[];
}

/** An owner override as stored; see home-schema.ts. */
interface StoredOverride {
  name: string | null;
  /** undefined: the driver's area. */
  area: string | null | undefined;
  aliases_added: string[];
  aliases_removed: string[];
}

/** What the driver registered of the parts the owner may override. */
interface DriverNaming {
  name: string;
  aliases: string[];
  area: string | null;
}

interface Statements {
  stored: SqlStatement;
  history: SqlStatement;
  overrides: SqlStatement;
  saveOverride: SqlStatement;
  dropOverride: SqlStatement;
  /** Writes the queue in one transaction. */
  write: (entities: readonly QueuedEntity[], history: readonly PendingHistory[]) => void;
}

/** One registered entity. `info` is never handed out: callers get copies. */
interface LiveEntity extends QueuedEntity {
  readonly handler: EntityDefinition['call'];
  /** The context of the call running now (the last one started wins), or null. */
  context: EntityContext | null;
  /** Identifies the call whose context is pending, so an earlier call ending does not clear a later one's. */
  callToken: object | null;
  /** The driver's name, aliases and area, under the owner's overrides. */
  readonly driver: DriverNaming;
}

export class EntityRegistry implements Service {
  readonly name = 'entities';
  readonly #options: EntityRegistryOptions;
  readonly #live = new Map<string, LiveEntity>();
  /** Names of areas that entities named but core.home.areas does not list, by id. */
  readonly #namedAreas = new Map<string, string>();
  readonly #writes: EntityWriteQueue;
  /** The owner's overrides by entity id, read once from entity_overrides. */
  readonly #overrides = new Map<string, StoredOverride>();
  #db: SqlDatabase | undefined;
  #sql: Statements | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: EntityRegistryOptions) {
    this.#options = options;
    this.#writes = new EntityWriteQueue({
      // Prepared on first use: a database that cannot be opened is a refused write, retried.
      write: (entities, history) => this.#statements().write(entities, history),
      log: options.log,
      clock: options.clock,
      ...(options.writeBehind !== undefined && { limits: options.writeBehind }),
      ...(options.onFlush !== undefined && { onFlush: options.onFlush }),
    });
  }

  async start(_signal: AbortSignal): Promise<void> {
    this.#statements();
    this.#schedule();
  }

  /** Writes everything waiting, the touched last_updated values included, and ends the registry's timers. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#writes.stop(this.#live.values());
  }

  /**
   * Writes the queued changes now, in one transaction. Returns false when the write failed: it is
   * logged, the queue is kept and a retry is scheduled. Reads and stop() call it; so may tests.
   */
  flush(): boolean {
    return this.#writes.flush();
  }

  /**
   * Registers (or, for the same owner, replaces) an entity. An id registered by another owner is
   * refused; a stored row from an earlier run gives the initial state when the definition has none.
   */
  register(owner: string, definition: EntityDefinition): EntityHandle {
    const checked = checkDefinition(definition);
    const entityId = `${checked.domain}.${checked.object_id}`;
    const existing = this.#live.get(entityId);
    if (existing !== undefined && existing.info.owner !== owner) {
      throw new HomeAgentError('HA_ERR_ENTITY_DEFINITION', `${entityId} is already registered by ${existing.info.owner}`);
    }
    const now = this.#options.clock.now();
    const stored = this.#stored(entityId);
    const storedState = stored?.state ?? null;
    const state = checked.initial_state !== undefined ? checked.initial_state : storedState;
    const sameAsStored = stored !== undefined && storedState === state;
    const driver: DriverNaming = {
      name: checked.name,
      aliases: checked.aliases,
      area: checked.area === null ? null : this.#areaId(checked.area),
    };
    const info: EntityInfo = {
      entity_id: entityId,
      domain: checked.domain,
      ...named(driver, this.#overrides.get(entityId)),
      device: checked.device,
      state,
      attributes: checked.attributes,
      unit: checked.unit,
      device_class: checked.device_class,
      last_changed: sameAsStored ? stored.last_changed : now,
      last_updated: now,
      owner,
      critical: checked.critical,
      services: checked.services,
      entity_category: checked.entity_category,
      state_class: checked.state_class,
    };
    const live: LiveEntity = { info, handler: checked.call, context: null, callToken: null, touched: false, driver };
    this.#live.set(entityId, live);
    // A first state or one different from the stored state is a change worth a history row.
    this.#writes.add(live, (stored === undefined ? state !== null : !sameAsStored) ? now : undefined);
    this.#options.events.emit('entity.registered', { entity_id: entityId, domain: info.domain, owner });
    return {
      entity_id: entityId,
      update: (next, attributes) => {
        // A handle of a replaced registration (the owner reloaded) no longer speaks for the entity.
        if (this.#live.get(entityId) === live) this.#update(live, next, attributes);
      },
      remove: () => {
        if (this.#live.get(entityId) === live) this.#remove(live);
      },
    };
  }

  /** Removes every entity of an owner (it stopped) but those in `keep`; their rows and history stay. */
  removeOwner(owner: string, keep: ReadonlySet<string> = new Set()): void {
    for (const live of [...this.#live.values()]) {
      if (live.info.owner === owner && !keep.has(live.info.entity_id)) this.#remove(live);
    }
  }

  list(filter: EntityFilter = {}): EntityInfo[] {
    const area = filter.area === undefined ? undefined : (findArea(filter.area, this.areas())?.id ?? filter.area);
    const out: EntityInfo[] = [];
    for (const { info } of this.#live.values()) {
      if (filter.domain !== undefined && info.domain !== filter.domain) continue;
      if (area !== undefined && info.area !== area) continue;
      if (filter.owner !== undefined && info.owner !== filter.owner) continue;
      out.push(copy(info));
    }
    return out.sort((a, b) => a.entity_id.localeCompare(b.entity_id));
  }

  /** The registered entity a reference (id, name, alias, area + name) means, or undefined when none or several. */
  find(reference: string): EntityInfo | undefined {
    const { entity } = this.#resolution(reference);
    return entity === undefined ? undefined : copy(entity);
  }

  /** Like {@link find}, but HA_ERR_ENTITY_NOT_FOUND / HA_ERR_ENTITY_AMBIGUOUS (listing the candidates) instead of undefined. */
  resolve(reference: string): EntityInfo {
    return copy(this.#resolveLive(reference).info);
  }

  /**
   * Applies the owner's change to a registered entity's name, area or aliases and stores it as an
   * override (see the file comment); returns the entity after it. The entity is announced as
   * registered again, so the intents learn the new names and MQTT discovery republishes it.
   * Auditing is the caller's job.
   */
  customize(reference: string, change: EntityCustomization, actor: string): EntityInfo {
    const live = this.#resolveLive(reference);
    const entityId = live.info.entity_id;
    const current = this.#overrides.get(entityId) ?? { name: null, area: undefined, aliases_added: [], aliases_removed: [] };
    const next: StoredOverride = { ...current, aliases_added: [...current.aliases_added], aliases_removed: [...current.aliases_removed] };
    if (change.name !== undefined) {
      next.name = change.name === null ? null : overrideText(entityId, 'name', change.name);
      // The driver's own name is no override: it would outlive a rename in the driver.
      if (next.name === live.driver.name) next.name = null;
    }
    if (change.reset_area === true) next.area = undefined;
    else if (change.area !== undefined) next.area = change.area === null ? null : this.#areaId(overrideText(entityId, 'area', change.area));
    if (next.area === live.driver.area) next.area = undefined;
    if (change.reset_aliases === true || change.aliases !== undefined) {
      next.aliases_added = [];
      next.aliases_removed = [];
    }
    if (change.aliases !== undefined) {
      const wanted = change.aliases.map((a) => overrideText(entityId, 'alias', a));
      next.aliases_removed = live.driver.aliases.filter((a) => !wanted.some((w) => sameName(w, a)));
      for (const alias of wanted) {
        if (!live.driver.aliases.some((a) => sameName(a, alias)) && !next.aliases_added.some((a) => sameName(a, alias))) {
          next.aliases_added.push(alias);
        }
      }
    }
    for (const alias of change.add_aliases ?? []) {
      const text = overrideText(entityId, 'alias', alias);
      next.aliases_removed = next.aliases_removed.filter((a) => !sameName(a, text));
      if (!live.driver.aliases.some((a) => sameName(a, text)) && !next.aliases_added.some((a) => sameName(a, text))) {
        next.aliases_added.push(text);
      }
    }
    for (const alias of change.remove_aliases ?? []) {
      const text = overrideText(entityId, 'alias', alias);
      const known = [...live.driver.aliases, ...next.aliases_added].some((a) => sameName(a, text));
      if (!known) {
        throw new HomeAgentError(
          'HA_ERR_ENTITY_OVERRIDE',
          `${entityId} has no alias ${JSON.stringify(text)}; its aliases: ${live.info.aliases.join(', ') || '(none)'}`,
          {
            details: { field: 'alias', aliases: [...live.info.aliases] },
          },
        );
      }
      next.aliases_added = next.aliases_added.filter((a) => !sameName(a, text));
      // Stored as the driver spells it.
      const driverAlias = live.driver.aliases.find((a) => sameName(a, text));
      if (driverAlias !== undefined && !next.aliases_removed.some((a) => sameName(a, text))) next.aliases_removed.push(driverAlias);
    }
    const naming = named(live.driver, next);
    if (naming.aliases.length > MAX_ALIASES) {
      throw new HomeAgentError(
        'HA_ERR_ENTITY_OVERRIDE',
        `${entityId} would have ${naming.aliases.length} aliases; at most ${MAX_ALIASES}`,
        {
          details: { field: 'alias' },
        },
      );
    }
    const sql = this.#statements();
    const now = this.#options.clock.now();
    if (isEmptyOverride(next)) {
      sql.dropOverride.run(entityId);
      this.#overrides.delete(entityId);
    } else {
      sql.saveOverride.run(
        entityId,
        next.name,
        next.area === undefined ? 0 : 1,
        next.area ?? null,
        JSON.stringify(next.aliases_added),
        JSON.stringify(next.aliases_removed),
        now,
        actor,
      );
      this.#overrides.set(entityId, next);
    }
    delete live.info.overrides;
    Object.assign(live.info, naming);
    this.#writes.add(live, undefined);
    this.#options.events.emit('entity.registered', { entity_id: entityId, domain: live.info.domain, owner: live.info.owner });
    return copy(live.info);
  }

  /**
   * Calls a service. Updates the entity reports while the handler runs carry `context` in their
   * `entity.state_changed`. Resolves with the entity after the call; auditing is the caller's job.
   */
  async call(reference: string, service: string, data: Record<string, unknown>, context: EntityContext): Promise<EntityInfo> {
    const live = this.#resolveLive(reference);
    const { info } = live;
    if (!info.services.includes(service)) {
      const offered = info.services.length === 0 ? 'it only reports its state' : `it offers ${info.services.join(', ')}`;
      throw new HomeAgentError('HA_ERR_ENTITY_SERVICE', `${info.entity_id} has no service ${JSON.stringify(service)}: ${offered}`, {
        details: { field: 'service', services: [...info.services] },
      });
    }
    const checked = validateServiceData(info.entity_id, info.domain, service, data);
    if (info.state === STATE_UNAVAILABLE) {
      throw new HomeAgentError('HA_ERR_ENTITY_UNAVAILABLE', `${info.entity_id} is unavailable: its device does not answer`);
    }
    const handler = live.handler;
    if (handler === undefined) {
      throw new HomeAgentError('HA_ERR_ENTITY_SERVICE', `${info.entity_id} reports only: its owner ${info.owner} takes no calls`, {
        details: { field: 'service', reports_only: true },
      });
    }
    const token = {};
    live.context = { ...context };
    live.callToken = token;
    try {
      await handler(service, checked, context);
    } catch (error) {
      if (error instanceof HomeAgentError) throw error;
      throw new HomeAgentError('HA_ERR_INTERNAL', `${info.entity_id} ${service} failed: ${describeError(error)}`, { cause: error });
    } finally {
      if (live.callToken === token) {
        live.context = null;
        live.callToken = null;
      }
    }
    return copy(live.info);
  }

  /** Stored states of an entity (registered or not), oldest first: the newest `limit` rows of the range. */
  history(entityId: string, options: HistoryOptions = {}): StateHistoryRow[] {
    const to = options.to ?? this.#options.clock.now();
    const from = options.from ?? to - DAY_MS;
    const wanted = options.limit !== undefined && Number.isFinite(options.limit) ? Math.trunc(options.limit) : DEFAULT_HISTORY_LIMIT;
    const limit = Math.min(Math.max(1, wanted), MAX_HISTORY_LIMIT);
    const sql = this.#statements();
    this.flush();
    const rows = (sql.history.all(entityId, from, to, limit) as StoredHistoryRow[]).reverse().map((row) => historyRow(entityId, row));
    // Rows the database refused are still the caller's history (they are newer than every stored row of theirs).
    const waiting = this.#writes.waitingHistory(entityId, from, to);
    if (waiting.length === 0) return rows;
    const merged = [...rows, ...waiting.map((r) => ({ entity_id: entityId, at: r.at, state: r.state, period_ms: 0 }))];
    return merged.sort((a, b) => a.at - b.at).slice(-limit);
  }

  /**
   * Per-period min, mean and max of an entity's stored states between from and to (epoch ms,
   * default the last 24 hours), periods of core.home.history_period_minutes; see entity-history.ts.
   */
  statistics(entityId: string, options: { from?: number; to?: number } = {}): { period_ms: number; rows: StateHistoryRow[] } {
    const to = options.to ?? this.#options.clock.now();
    const from = options.from ?? to - DAY_MS;
    const db = this.#database();
    this.flush();
    const periodMs = this.#options.settings().history_period_minutes * 60_000;
    return { period_ms: periodMs, rows: historyStatistics(db, entityId, { from, to, periodMs }) };
  }

  /** The configured areas, then the ones entities named that are not configured. */
  areas(): Area[] {
    const configured = this.#options
      .settings()
      .areas.map((a) => ({ id: a.id, name: a.name, aliases: [...a.aliases], ...(a.floor !== undefined && { floor: a.floor }) }));
    const known = new Set(configured.map((a) => a.id));
    const extra: Area[] = [];
    for (const { info } of this.#live.values()) {
      if (info.area === null || known.has(info.area)) continue;
      known.add(info.area);
      extra.push({ id: info.area, name: this.#namedAreas.get(info.area) ?? info.area, aliases: [] });
    }
    return [...configured, ...extra.sort((a, b) => a.id.localeCompare(b.id))];
  }

  /** History retention and downsampling (see entity-history.ts); runs on a timer while started. */
  maintain(now = this.#options.clock.now()): { downsampled: number; deleted: number } {
    const db = this.#database();
    this.flush();
    const result = maintainHistory(db, this.#options.settings(), now);
    if (result.downsampled > 0 || result.deleted > 0) this.#options.log.debug(result, 'entity history maintained');
    return result;
  }

  #update(live: LiveEntity, state: EntityState, attributes: Record<string, unknown> | undefined): void {
    const { info } = live;
    checkState(info.entity_id, state);
    const now = this.#options.clock.now();
    const stateChanged = state !== info.state;
    const merged = attributes === undefined ? undefined : mergeAttributes(info.attributes, attributes);
    if (!stateChanged && merged === undefined) {
      info.last_updated = now;
      live.touched = true;
      return;
    }
    const oldState = info.state;
    const nextAttributes = merged ?? info.attributes;
    info.state = state;
    info.attributes = nextAttributes;
    if (stateChanged) info.last_changed = now;
    info.last_updated = now;
    live.touched = false;
    this.#writes.add(live, stateChanged ? now : undefined);
    // Listeners get the registry's attributes object itself (no copy on the fast path); it is
    // replaced, never changed in place, so it stays what it was at this change.
    this.#options.events.emit('entity.state_changed', {
      entity_id: info.entity_id,
      domain: info.domain,
      old_state: oldState,
      new_state: state,
      state_changed: stateChanged,
      attributes: nextAttributes,
      at: now,
      context: live.context,
    });
  }

  #remove(live: LiveEntity): void {
    if (live.touched) this.#writes.add(live, undefined);
    this.#live.delete(live.info.entity_id);
    this.#options.events.emit('entity.removed', { entity_id: live.info.entity_id, domain: live.info.domain, owner: live.info.owner });
  }

  /**
   * The state stored for an entity, or undefined when it never had a row. A row waiting in the queue
   * is newer than the database's, and one that does not wait is written: no write is needed first.
   */
  #stored(entityId: string): { state: EntityState; last_changed: number } | undefined {
    const sql = this.#statements();
    const waiting = this.#writes.waitingEntity(entityId);
    if (waiting !== undefined) return { state: waiting.info.state, last_changed: waiting.info.last_changed };
    const row = sql.stored.get(entityId) as { state: string; last_changed: number } | undefined;
    return row === undefined ? undefined : { state: JSON.parse(row.state) as EntityState, last_changed: row.last_changed };
  }

  #resolution(reference: string) {
    return resolveEntity(
      reference,
      [...this.#live.values()].map((l) => l.info),
      this.areas(),
    );
  }

  #resolveLive(reference: string): LiveEntity {
    const { entity, candidates } = this.#resolution(reference);
    if (entity !== undefined) {
      const live = this.#live.get(entity.entity_id);
      if (live !== undefined) return live;
    }
    if (candidates.length === 0) {
      throw new HomeAgentError('HA_ERR_ENTITY_NOT_FOUND', `no entity is called ${JSON.stringify(reference)}`);
    }
    candidates.sort((a, b) => a.entity_id.localeCompare(b.entity_id));
    const listed = candidates.map((c) => `${c.entity_id} (${c.name}${c.area === null ? '' : `, ${c.area}`})`).join(', ');
    throw new HomeAgentError(
      'HA_ERR_ENTITY_AMBIGUOUS',
      `${JSON.stringify(reference)} could mean ${listed}; use the entity id or add the area`,
      {
        details: { candidates: candidates.map((c) => c.entity_id) },
      },
    );
  }

  /** A definition's area (configured id, name or alias, or a new name) as an area id. */
  #areaId(area: string): string {
    const configured = findArea(area, this.#options.settings().areas);
    if (configured !== undefined) return configured.id;
    const id = OBJECT_ID.test(area) ? area : areaSlug(area);
    if (!this.#namedAreas.has(id) || id !== area) this.#namedAreas.set(id, area);
    return id;
  }

  #schedule(): void {
    const interval = this.#options.settings().maintenance_interval_ms;
    this.#timer = setTimeout(() => {
      try {
        this.maintain();
      } catch (error) {
        this.#options.log.error({ err: describeError(error) }, 'entity history maintenance failed');
      }
      this.#schedule();
    }, interval);
    this.#timer.unref();
  }

  #database(): SqlDatabase {
    this.#statements();
    return this.#db as SqlDatabase;
  }

  /** Migrates and prepares on first use, so the constructor stays free of I/O and start() is not a precondition for reads. */
  #statements(): Statements {
    if (this.#sql !== undefined) return this.#sql;
    const db = openHomeDatabase(this.#options.database());
    const upsert = db.prepare(`
        INSERT INTO entities (entity_id, domain, name, aliases, area, device, unit, device_class, attributes, state, last_changed, last_updated, owner, entity_category, state_class)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (entity_id) DO UPDATE SET
          domain = excluded.domain, name = excluded.name, aliases = excluded.aliases, area = excluded.area,
          device = excluded.device, unit = excluded.unit, device_class = excluded.device_class,
          attributes = excluded.attributes, state = excluded.state, last_changed = excluded.last_changed,
          last_updated = excluded.last_updated, owner = excluded.owner, entity_category = excluded.entity_category,
          state_class = excluded.state_class`);
    const appendHistory = db.prepare('INSERT INTO state_history (entity_id, at, state, period_ms) VALUES (?, ?, ?, 0)');
    // The whole row from memory: it is what the entity is now, whatever reports came in between.
    const writeRows = (entities: readonly QueuedEntity[], history: readonly PendingHistory[]) => {
      for (const { info } of entities) {
        upsert.run(
          info.entity_id,
          info.domain,
          info.name,
          JSON.stringify(info.aliases),
          info.area,
          info.device,
          info.unit,
          info.device_class,
          JSON.stringify(info.attributes),
          JSON.stringify(info.state),
          info.last_changed,
          info.last_updated,
          info.owner,
          info.entity_category,
          info.state_class,
        );
      }
      for (const row of history) appendHistory.run(row.entity_id, row.at, JSON.stringify(row.state));
    };
    const sql: Statements = {
      stored: db.prepare('SELECT state, last_changed FROM entities WHERE entity_id = ?'),
      overrides: db.prepare('SELECT entity_id, name, area_set, area, aliases_added, aliases_removed FROM entity_overrides'),
      saveOverride: db.prepare(`
        INSERT INTO entity_overrides (entity_id, name, area_set, area, aliases_added, aliases_removed, updated_at, actor)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (entity_id) DO UPDATE SET
          name = excluded.name, area_set = excluded.area_set, area = excluded.area, aliases_added = excluded.aliases_added,
          aliases_removed = excluded.aliases_removed, updated_at = excluded.updated_at, actor = excluded.actor`),
      dropOverride: db.prepare('DELETE FROM entity_overrides WHERE entity_id = ?'),
      history: db.prepare(
        'SELECT at, state, period_ms, min, mean, max FROM state_history WHERE entity_id = ? AND at >= ? AND at <= ? ORDER BY at DESC, rowid DESC LIMIT ?',
      ),
      write: (entities, history) => db.transaction(() => writeRows(entities, history))(),
    };
    for (const row of sql.overrides.all() as StoredOverrideRow[]) this.#overrides.set(row.entity_id, readOverride(row));
    this.#db = db;
    this.#sql = sql;
    return sql;
  }
}

interface StoredOverrideRow {
  entity_id: string;
  name: string | null;
  area_set: number;
  area: string | null;
  aliases_added: string;
  aliases_removed: string;
}

function readOverride(row: StoredOverrideRow): StoredOverride {
  return {
    name: row.name,
    area: row.area_set === 1 ? row.area : undefined,
    aliases_added: JSON.parse(row.aliases_added) as string[],
    aliases_removed: JSON.parse(row.aliases_removed) as string[],
  };
}

function isEmptyOverride(o: StoredOverride): boolean {
  return o.name === null && o.area === undefined && o.aliases_added.length === 0 && o.aliases_removed.length === 0;
}

/** The name, aliases and area an entity shows: the driver's, with the owner's overrides over them. */
function named(driver: DriverNaming, override: StoredOverride | undefined): Pick<EntityInfo, 'name' | 'aliases' | 'area' | 'overrides'> {
  if (override === undefined || isEmptyOverride(override)) return { name: driver.name, aliases: [...driver.aliases], area: driver.area };
  const name = override.name ?? driver.name;
  const aliases = driver.aliases.filter((a) => !override.aliases_removed.some((r) => sameName(r, a)));
  for (const added of override.aliases_added) if (!aliases.some((a) => sameName(a, added))) aliases.push(added);
  const overrides: EntityOverrides = {
    ...(override.name !== null && { name: override.name }),
    ...(override.area !== undefined && { area: override.area }),
    ...(override.aliases_added.length > 0 && { aliases_added: [...override.aliases_added] }),
    ...(override.aliases_removed.length > 0 && { aliases_removed: [...override.aliases_removed] }),
  };
  return { name, aliases, area: override.area === undefined ? driver.area : override.area, overrides };
}

function sameName(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

function overrideText(entityId: string, field: string, value: string): string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '' || text.length > MAX_NAME_CHARS) {
    throw new HomeAgentError('HA_ERR_ENTITY_OVERRIDE', `${entityId}: the ${field} must be 1-${MAX_NAME_CHARS} characters`, {
      details: { field },
    });
  }
  return text;
}

interface StoredHistoryRow {
  at: number;
  state: string;
  period_ms: number;
  min: number | null;
  mean: number | null;
  max: number | null;
}

function historyRow(entityId: string, row: StoredHistoryRow): StateHistoryRow {
  const out: StateHistoryRow = { entity_id: entityId, at: row.at, state: JSON.parse(row.state) as EntityState, period_ms: row.period_ms };
  if (row.min !== null) out.min = row.min;
  if (row.mean !== null) out.mean = row.mean;
  if (row.max !== null) out.max = row.max;
  return out;
}

interface CheckedDefinition {
  domain: EntityDomain;
  object_id: string;
  name: string;
  aliases: string[];
  area: string | null;
  device: string | null;
  unit: string | null;
  device_class: string | null;
  entity_category: EntityCategory | null;
  state_class: StateClass | null;
  attributes: Record<string, unknown>;
  initial_state: EntityState | undefined;
  critical: boolean;
  services: string[];
  call: EntityDefinition['call'];
}

function checkDefinition(definition: EntityDefinition): CheckedDefinition {
  if (typeof definition !== 'object' || definition === null) throw invalidDefinition('the definition must be an object');
  const { domain, object_id } = definition;
  if (!(ENTITY_DOMAINS as readonly unknown[]).includes(domain)) {
    throw invalidDefinition(`domain ${JSON.stringify(domain)} is not one of ${ENTITY_DOMAINS.join(', ')}`);
  }
  if (typeof object_id !== 'string' || !OBJECT_ID.test(object_id)) {
    throw invalidDefinition(`object_id ${JSON.stringify(object_id)} must be 1-64 lowercase letters, digits or _`);
  }
  const where = `${domain}.${object_id}`;
  const name = typeof definition.name === 'string' ? definition.name.trim() : '';
  if (name === '' || name.length > MAX_NAME_CHARS) throw invalidDefinition(`${where}: name must be 1-${MAX_NAME_CHARS} characters`);
  const aliases = definition.aliases ?? [];
  if (
    !Array.isArray(aliases) ||
    aliases.length > MAX_ALIASES ||
    aliases.some((a) => typeof a !== 'string' || a.trim() === '' || a.length > MAX_NAME_CHARS)
  ) {
    throw invalidDefinition(`${where}: aliases must be at most ${MAX_ALIASES} non-empty names`);
  }
  const offered = DOMAIN_SERVICES[domain];
  const services = definition.services ?? [...offered];
  const foreign = Array.isArray(services) ? services.filter((s) => !offered.includes(s)) : ['(not a list)'];
  if (foreign.length > 0) {
    throw invalidDefinition(`${where}: services ${foreign.join(', ')} are not ${domain} services (${offered.join(', ') || 'none'})`);
  }
  const attributes = definition.attributes ?? {};
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes)) {
    throw invalidDefinition(`${where}: attributes must be an object`);
  }
  if (definition.initial_state !== undefined) checkState(where, definition.initial_state);
  const category = definition.entity_category ?? null;
  if (category !== null && !(ENTITY_CATEGORIES as readonly unknown[]).includes(category)) {
    throw invalidDefinition(`${where}: entity_category ${JSON.stringify(category)} is not one of ${ENTITY_CATEGORIES.join(', ')} or null`);
  }
  const stateClass = definition.state_class;
  if (stateClass !== undefined && stateClass !== null && !(STATE_CLASSES as readonly unknown[]).includes(stateClass)) {
    throw invalidDefinition(`${where}: state_class ${JSON.stringify(stateClass)} is not one of ${STATE_CLASSES.join(', ')} or null`);
  }
  const unit = optionalText(where, 'unit', definition.unit);
  const deviceClass = optionalText(where, 'device_class', definition.device_class);
  if (definition.call !== undefined && typeof definition.call !== 'function') throw invalidDefinition(`${where}: call must be a function`);
  return {
    domain,
    object_id,
    name,
    aliases: aliases.map((a) => a.trim()),
    area: optionalText(where, 'area', definition.area),
    device: optionalText(where, 'device', definition.device),
    unit,
    device_class: deviceClass,
    entity_category: category,
    state_class: stateClass === undefined ? defaultStateClass(domain, deviceClass, unit) : stateClass,
    attributes: { ...attributes },
    initial_state: definition.initial_state,
    critical: definition.critical ?? CRITICAL_DOMAINS.includes(domain),
    services: [...new Set(services)],
    call: definition.call === undefined ? undefined : definition.call.bind(definition),
  };
}

function optionalText(where: string, field: string, value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_NAME_CHARS) {
    throw invalidDefinition(`${where}: ${field} must be 1-${MAX_NAME_CHARS} characters or null`);
  }
  return value.trim();
}

function checkState(where: string, state: unknown): void {
  if (state === null || typeof state === 'string' || (typeof state === 'number' && Number.isFinite(state))) return;
  throw new HomeAgentError(
    'HA_ERR_ENTITY_DEFINITION',
    `${where}: a state must be a string, a finite number or null, not ${describeValue(state)}`,
  );
}

function describeValue(value: unknown): string {
  return typeof value === 'number' ? String(value) : typeof value;
}

function invalidDefinition(message: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_ENTITY_DEFINITION', message);
}

/** The merged attributes, or undefined when the report changes none of them. */
function mergeAttributes(current: Record<string, unknown>, report: Record<string, unknown>): Record<string, unknown> | undefined {
  for (const [key, value] of Object.entries(report)) {
    const old = current[key];
    if (Object.is(old, value)) continue;
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof old === 'object' &&
      old !== null &&
      JSON.stringify(old) === JSON.stringify(value)
    ) {
      continue;
    }
    // Copy on write: event payloads and earlier copies keep the object they were given.
    return { ...current, ...report };
  }
  return undefined;
}

function copy(info: EntityInfo): EntityInfo {
  const out: EntityInfo = {
    ...info,
    aliases: [...info.aliases],
    services: [...info.services],
    attributes: structuredClone(info.attributes),
  };
  if (info.overrides !== undefined) out.overrides = structuredClone(info.overrides);
  return out;
}
