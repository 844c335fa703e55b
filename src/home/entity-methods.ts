/**
 * Control methods for the home's entities (`entities.list`, `entities.get`, `entities.call`,
 * `entities.history`, `entities.statistics`, `entities.areas`), used by `homeagentctl entities` and `homeagentctl
 * sensors`, and the owner's `entities.rename`, `entities.set_area`, `entities.aliases` and
 * `entities.customize` (the page's edit dialog). A call
 * or an owner's change is audited here with the caller as actor (the registry audits nothing; the
 * control registry neither), also when it fails.
 */
import { Type } from '@sinclair/typebox';
import type { EntitiesGetResult, EntitiesHistoryResult, EntitiesStatisticsResult } from '../api/home.js';
import type { AuditRecord } from '../log/logger.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import { describeError } from '../shared/errors.js';
import { DEFAULT_HISTORY_LIMIT, type EntityCustomization, type EntityRegistry, MAX_HISTORY_LIMIT } from './entity-registry.js';
import { type Area, ENTITY_DOMAINS, type EntityInfo } from './types.js';

export type { EntitiesGetResult, EntitiesHistoryResult, EntitiesStatisticsResult };

export interface EntityMethodOptions {
  /** The LogManager: every call writes an audit record. */
  logs: { audit(record: AuditRecord): void };
  /** Epoch ms for the default history range (pass the registry's clock); Date.now by default. */
  now?: () => number;
}

const DEFAULT_GET_HISTORY = 10;
const DAY_MS = 86_400_000;
// The registry owns the id syntax; this only decides whether an unresolved reference may be a removed entity's id.
const ENTITY_ID = /^[a-z_]{1,32}\.[a-z0-9_]{1,64}$/;

const Reference = Type.String({ minLength: 1, maxLength: 200, description: 'Entity id, name or alias (with the area if needed).' });
const Domain = Type.Union(
  ENTITY_DOMAINS.map((d) => Type.Literal(d)),
  { description: 'Only entities of this domain.' },
);

export function registerEntityMethods(control: ControlMethodRegistrar, registry: EntityRegistry, options: EntityMethodOptions): void {
  // A removed entity's stored states are still found by its id.
  const storedEntityId = (entity: string) =>
    registry.find(entity)?.entity_id ?? (ENTITY_ID.test(entity.trim()) ? entity.trim() : registry.resolve(entity).entity_id);

  control.register({
    name: 'entities.list',
    description: 'The registered entities with their state, optionally of one domain and/or area (id, name or alias).',
    params: Type.Object({
      domain: Type.Optional(Domain),
      area: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    }),
    handler: ({ domain, area }): EntityInfo[] =>
      registry.list({ ...(domain !== undefined && { domain }), ...(area !== undefined && { area }) }),
  });

  control.register({
    name: 'entities.get',
    description: `One entity by id, name or alias, with its last stored states (history_limit, default ${DEFAULT_GET_HISTORY}).`,
    params: Type.Object({
      entity: Reference,
      history_limit: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_HISTORY_LIMIT })),
    }),
    handler: ({ entity, history_limit }): EntitiesGetResult => {
      const info = registry.resolve(entity);
      const limit = history_limit ?? DEFAULT_GET_HISTORY;
      return { entity: info, history: limit === 0 ? [] : registry.history(info.entity_id, { from: 0, limit }) };
    },
  });

  control.register({
    name: 'entities.call',
    description: 'Call a service of an entity (turn_on, toggle, set_position, ...) with optional data; returns the entity after the call.',
    params: Type.Object({
      entity: Reference,
      service: Type.String({ minLength: 1, maxLength: 64 }),
      data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
    handler: async ({ entity, service, data }, caller): Promise<EntityInfo> => {
      const audit = { actor: caller.actor, action: 'entities.call', entity, service, data: data ?? {} };
      try {
        const after = await registry.call(entity, service, data ?? {}, { actor: caller.actor });
        options.logs.audit({ ...audit, entity_id: after.entity_id, state: after.state });
        return after;
      } catch (error) {
        options.logs.audit({ ...audit, error: describeError(error) });
        throw error;
      }
    },
  });

  control.register({
    name: 'entities.history',
    description: `Stored states of an entity between from and to (epoch ms; default the last 24 hours), oldest first; limit default ${DEFAULT_HISTORY_LIMIT}, at most ${MAX_HISTORY_LIMIT}. A removed entity's history is found by its id.`,
    params: Type.Object({
      entity: Reference,
      from: Type.Optional(Type.Integer({ minimum: 0 })),
      to: Type.Optional(Type.Integer({ minimum: 0 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HISTORY_LIMIT })),
    }),
    handler: ({ entity, from, to, limit }): EntitiesHistoryResult => {
      const entityId = storedEntityId(entity);
      const end = to ?? (options.now ?? Date.now)();
      const start = from ?? end - DAY_MS;
      return {
        entity_id: entityId,
        from: start,
        to: end,
        rows: registry.history(entityId, { from: start, to: end, ...(limit !== undefined && { limit }) }),
      };
    },
  });

  control.register({
    name: 'entities.statistics',
    description:
      'Min, mean and max per period (core.home.history_period_minutes) of an entity between from and to (epoch ms; default the last 24 hours), oldest first: what a long chart draws. A removed entity is found by its id.',
    params: Type.Object({
      entity: Reference,
      from: Type.Optional(Type.Integer({ minimum: 0 })),
      to: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
    handler: ({ entity, from, to }): EntitiesStatisticsResult => {
      const entityId = storedEntityId(entity);
      const end = to ?? (options.now ?? Date.now)();
      const start = from ?? end - DAY_MS;
      return { entity_id: entityId, from: start, to: end, ...registry.statistics(entityId, { from: start, to: end }) };
    },
  });

  // The owner's changes to names, areas and aliases: stored as overrides over the driver's (entity-registry.ts).
  const customize = (method: string, entity: string, change: EntityCustomization, caller: { actor: string }): EntityInfo => {
    const audit = { actor: caller.actor, action: method, entity, change };
    try {
      const after = registry.customize(entity, change, caller.actor);
      options.logs.audit({ ...audit, entity_id: after.entity_id, name: after.name, area: after.area, aliases: after.aliases });
      return after;
    } catch (error) {
      options.logs.audit({ ...audit, error: describeError(error) });
      throw error;
    }
  };
  const Name = Type.String({ minLength: 1, maxLength: 128 });

  control.register({
    name: 'entities.rename',
    description:
      "Owner only: give an entity the owner's name (kept over restarts and the driver's rediscovery); without name, the driver's name again.",
    owner_only: true,
    params: Type.Object({ entity: Reference, name: Type.Optional(Name) }),
    handler: ({ entity, name }, caller): EntityInfo => customize('entities.rename', entity, { name: name ?? null }, caller),
  });

  control.register({
    name: 'entities.set_area',
    description:
      "Owner only: put an entity in an area (id, name or alias; a new name makes a new area), or in none with area null; without area, the driver's area again.",
    owner_only: true,
    params: Type.Object({
      entity: Reference,
      area: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()])),
    }),
    handler: ({ entity, area }, caller): EntityInfo =>
      customize('entities.set_area', entity, area === undefined ? { reset_area: true } : { area }, caller),
  });

  control.register({
    name: 'entities.aliases',
    description:
      "Owner only: add and/or remove aliases of an entity (other names people use for it; kept over restarts and rediscovery); reset: true for the driver's aliases again.",
    owner_only: true,
    params: Type.Object({
      entity: Reference,
      add: Type.Optional(Type.Array(Name, { maxItems: 16 })),
      remove: Type.Optional(Type.Array(Name, { maxItems: 16 })),
      reset: Type.Optional(Type.Boolean()),
    }),
    handler: ({ entity, add, remove, reset }, caller): EntityInfo =>
      customize(
        'entities.aliases',
        entity,
        {
          ...(add !== undefined && { add_aliases: add }),
          ...(remove !== undefined && { remove_aliases: remove }),
          ...(reset === true && { reset_aliases: true }),
        },
        caller,
      ),
  });

  control.register({
    name: 'entities.customize',
    description:
      "Owner only: the web page's edit dialog in one change: name (null: the driver's), area (null: none; reset_area: the driver's) and the whole list of aliases.",
    owner_only: true,
    params: Type.Object({
      entity: Reference,
      name: Type.Optional(Type.Union([Name, Type.Null()])),
      area: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()])),
      reset_area: Type.Optional(Type.Boolean()),
      aliases: Type.Optional(Type.Array(Name, { maxItems: 16 })),
    }),
    handler: ({ entity, name, area, reset_area, aliases }, caller): EntityInfo =>
      customize(
        'entities.customize',
        entity,
        {
          ...(name !== undefined && { name }),
          ...(area !== undefined && { area }),
          ...(reset_area === true && { reset_area: true }),
          ...(aliases !== undefined && { aliases }),
        },
        caller,
      ),
  });

  control.register({
    name: 'entities.areas',
    description: 'The areas: configured ones (core.home.areas) and those entities named that are not configured.',
    params: Type.Object({}),
    handler: (): Area[] => registry.areas(),
  });
}
