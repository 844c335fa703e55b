/**
 * Control methods for the home's entities (`entities.list`, `entities.get`, `entities.call`,
 * `entities.history`, `entities.statistics`, `entities.areas`), used by `homeagentctl entities` and `homeagentctl
 * sensors`. A call is audited here with the caller as actor (the registry audits nothing; the
 * control registry neither), also when it fails.
 */
import { Type } from '@sinclair/typebox';
import type { EntitiesGetResult, EntitiesHistoryResult, EntitiesStatisticsResult } from '../api/home.js';
import type { AuditRecord } from '../log/logger.js';
import type { ControlMethodRegistrar } from '../shared/control-method.js';
import { describeError } from '../shared/errors.js';
import { DEFAULT_HISTORY_LIMIT, type EntityRegistry, MAX_HISTORY_LIMIT } from './entity-registry.js';
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

  control.register({
    name: 'entities.areas',
    description: 'The areas: configured ones (core.home.areas) and those entities named that are not configured.',
    params: Type.Object({}),
    handler: (): Area[] => registry.areas(),
  });
}
