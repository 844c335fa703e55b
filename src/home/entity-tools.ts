/**
 * The tools the model uses on the home's entities: list them, read one with its recent history,
 * and call a service.
 *
 * A call on a critical entity (a lock, a cover, a valve, a siren, or one its driver marked
 * critical) must be confirmed by the owner. Confirmation is decided by the tool's tier, and a tier
 * is fixed per tool (the confirmation gate reads `definition.tier` before anything runs), so there
 * are two tools: `entity_call` (act) refuses a critical entity with `confirmation_required` and
 * points to `entity_call_critical` (dangerous), which the gate holds until the owner confirms on
 * their own channel. The model can thus ask for the garage door to open, never open it alone.
 *
 * entity_list leaves out diagnostic and config entities (battery levels, link quality, device
 * settings) unless the model asks for them with include_diagnostic: they are about the devices,
 * and listing them with the house would double the list for nothing a person asks about.
 */

import { describeError, HomeAgentError } from '../shared/errors.js';
import { type ToolDefinition, ToolError } from '../shared/tool.js';
import { optionalText, requiredText, type ToolArgs } from '../shared/tool-args.js';
import type { EntityRegistry } from './entity-registry.js';
import { findArea } from './entity-resolver.js';
import { serviceFields } from './entity-services.js';
import { DOMAIN_SERVICES, ENTITY_DOMAINS, type EntityDomain, type EntityInfo, isPrimaryEntity } from './types.js';

export const ENTITY_TOOL_OWNER = 'core';
/** History rows entity_get returns with the entity. */
export const GET_HISTORY_ROWS = 10;
/** Entities entity_list returns at most (the result stays compact; filter by domain or area for more). */
export const LIST_LIMIT = 200;
const MAX_REFERENCE_CHARS = 200;

export interface EntityToolOptions {
  /** Writes an audit record for every call the model makes (the LogManager's audit). */
  audit?: (record: { actor: string; action: string; [field: string]: unknown }) => void;
}

const ENTITY_ARG = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_REFERENCE_CHARS,
  description: 'Entity id (switch.kitchen_light), name or alias, optionally with the area ("kitchen light", "厨房灯").',
};

export function entityTools(registry: EntityRegistry, options: EntityToolOptions = {}): ToolDefinition[] {
  const callParameters = {
    type: 'object',
    properties: {
      entity: ENTITY_ARG,
      service: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        description:
          'turn_on, turn_off, toggle, open, close, stop, set_position, lock, unlock, press, set_percentage, set_value, ' +
          'set_temperature, media_play, media_pause, media_next_track, media_previous_track, volume_set, play_media, start, pause, ' +
          'return_to_base (the entity lists its own).',
      },
      data: {
        type: 'object',
        description:
          'light turn_on: {brightness 0-255, color_name ("red", "warm white")}, both optional; fan turn_on/set_percentage: ' +
          '{percentage 0-100}; cover set_position: {position 0-100}; number set_value: {value}; climate set_temperature: ' +
          '{temperature}; media_player volume_set: {volume_level 0-1}; media_player play_media: {media_content_id, ' +
          'media_content_type (optional)}. Other services take none.',
      },
    },
    required: ['entity', 'service'],
    additionalProperties: false,
  };
  return [
    {
      name: 'entity_list',
      owner: ENTITY_TOOL_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      description:
        "List the home's devices and sensors (entities) with their current state; optionally only one domain or area. " +
        'Diagnostic entities (battery, signal, link quality, device settings) only with include_diagnostic.',
      parameters: {
        type: 'object',
        properties: {
          domain: { type: 'string', enum: [...ENTITY_DOMAINS], description: 'Only this kind (light, switch, sensor, ...).' },
          area: { type: 'string', minLength: 1, maxLength: 64, description: 'Only this area (id, name or alias).' },
          include_diagnostic: {
            type: 'boolean',
            description: 'Also the diagnostic and config entities (battery levels, signal strength, device settings); default false.',
          },
        },
        additionalProperties: false,
      },
      execute: (args: ToolArgs) => {
        const domain = domainArg(args);
        const area = optionalText(args, 'area', 'pass an area id or name, or leave it out', 64);
        if (area !== undefined && findArea(area, registry.areas()) === undefined) {
          const known = registry.areas().map((a) => a.name);
          throw new ToolError({
            reason: 'not_found',
            field: 'area',
            detail: `no area is called ${JSON.stringify(area)}`,
            hint: known.length === 0 ? 'no areas are set up; leave area out' : `areas: ${known.join(', ')}`,
          });
        }
        const includeDiagnostic = args.include_diagnostic === true;
        const all = registry.list({ ...(domain !== undefined && { domain }), ...(area !== undefined && { area }) });
        const entities = includeDiagnostic ? all : all.filter(isPrimaryEntity);
        const hidden = all.length - entities.length;
        return {
          count: entities.length,
          ...(hidden > 0 && { diagnostic_hidden: hidden }),
          entities: entities.slice(0, LIST_LIMIT).map(compact),
          ...(entities.length > LIST_LIMIT && { truncated: true, hint: 'filter by domain or area to see the rest' }),
        };
      },
    },
    {
      name: 'entity_get',
      owner: ENTITY_TOOL_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      description: `One entity in full (state, attributes, services, area) with its last ${GET_HISTORY_ROWS} stored states.`,
      parameters: { type: 'object', properties: { entity: ENTITY_ARG }, required: ['entity'], additionalProperties: false },
      execute: (args: ToolArgs) => {
        const entity = guarded(() => registry.resolve(referenceArg(args)));
        const history = registry.history(entity.entity_id, { from: 0, limit: GET_HISTORY_ROWS });
        return {
          ...entity,
          last_changed: iso(entity.last_changed),
          last_updated: iso(entity.last_updated),
          history: history.map(({ entity_id: _, ...row }) => ({ ...row, at: iso(row.at) })),
        };
      },
    },
    {
      name: 'entity_call',
      owner: ENTITY_TOOL_OWNER,
      tier: 'act',
      description:
        'Operate a device: turn a light or switch on/off, set a fan, a number or a thermostat, run a scene or script, control ' +
        'a media player or a vacuum. Critical entities (locks, covers, valves, ' +
        'sirens) are refused here: use entity_call_critical for them, which asks the owner to confirm.',
      parameters: callParameters,
      execute: (args: ToolArgs) => runCall(registry, args, false, options),
    },
    {
      name: 'entity_call_critical',
      owner: ENTITY_TOOL_OWNER,
      tier: 'dangerous',
      description:
        'Operate a critical entity (open a lock, a cover or a valve, sound a siren). Runs only after the owner confirms; ' +
        'use entity_call for everything else.',
      parameters: callParameters,
      execute: (args: ToolArgs) => runCall(registry, args, true, options),
    },
  ];
}

async function runCall(registry: EntityRegistry, args: ToolArgs, confirmed: boolean, options: EntityToolOptions): Promise<unknown> {
  const entity = guarded(() => registry.resolve(referenceArg(args)));
  const service = requiredText(args, 'service', `use one of: ${entity.services.join(', ') || '(none: it only reports)'}`, 64);
  const data = args.data ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ToolError({ reason: 'type', field: 'data', detail: 'data must be an object', hint: dataHint(entity, service) });
  }
  if (entity.critical && !confirmed) {
    throw new ToolError({
      reason: 'confirmation_required',
      field: 'entity',
      detail: `${entity.entity_id} (${entity.name}) is critical: calling it needs the owner's confirmation`,
      hint: 'call entity_call_critical with the same arguments; the owner will be asked to confirm',
    });
  }
  const audit = { actor: 'agent', action: 'entity.call', entity_id: entity.entity_id, service, data };
  try {
    const after = await registry.call(entity.entity_id, service, data as Record<string, unknown>, { actor: 'agent' });
    options.audit?.({ ...audit, state: after.state });
    return { entity_id: after.entity_id, name: after.name, state: after.state, ...(after.unit !== null && { unit: after.unit }) };
  } catch (error) {
    options.audit?.({ ...audit, error: describeError(error) });
    throw toolError(error, entity, service);
  }
}

function referenceArg(args: ToolArgs): string {
  return requiredText(args, 'entity', 'pass an entity id or name from entity_list', MAX_REFERENCE_CHARS);
}

function domainArg(args: ToolArgs): EntityDomain | undefined {
  const value = args.domain;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !(ENTITY_DOMAINS as readonly string[]).includes(value)) {
    throw new ToolError({
      reason: 'enum',
      field: 'domain',
      detail: `domain must be one of ${ENTITY_DOMAINS.join(', ')}`,
      hint: 'or leave it out',
    });
  }
  return value as EntityDomain;
}

function compact(entity: EntityInfo) {
  return {
    entity_id: entity.entity_id,
    name: entity.name,
    area: entity.area,
    state: entity.state,
    unit: entity.unit,
    ...(entity.entity_category !== null && { entity_category: entity.entity_category }),
  };
}

function guarded<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw toolError(error);
  }
}

/** A registry failure as the model reads it. */
function toolError(error: unknown, entity?: EntityInfo, service?: string): ToolError {
  if (error instanceof ToolError) return error;
  if (!(error instanceof HomeAgentError)) return new ToolError({ reason: 'failed', detail: describeError(error) });
  const detail = error.message;
  switch (error.code) {
    case 'HA_ERR_ENTITY_NOT_FOUND':
      return new ToolError({ reason: 'not_found', field: 'entity', detail, hint: 'call entity_list to see the entities' });
    case 'HA_ERR_ENTITY_AMBIGUOUS': {
      const candidates = (error.details?.candidates as string[] | undefined) ?? [];
      return new ToolError({ reason: 'rejected', field: 'entity', detail, hint: `pass one of the entity ids: ${candidates.join(', ')}` });
    }
    case 'HA_ERR_ENTITY_UNAVAILABLE':
      return new ToolError({
        reason: 'unavailable',
        field: 'entity',
        detail,
        hint: 'the device does not answer; tell the person, do not retry at once',
      });
    case 'HA_ERR_ENTITY_SERVICE': {
      const field = typeof error.details?.field === 'string' ? error.details.field : 'data';
      if (error.details?.reports_only === true) return new ToolError({ reason: 'capability', field, detail, hint: 'it can only be read' });
      if (field === 'service') {
        return new ToolError({
          reason: 'enum',
          field,
          detail,
          hint: `use one of: ${entity?.services.join(', ') || '(none: it only reports)'}`,
        });
      }
      return new ToolError({
        reason: 'range',
        field,
        detail,
        ...(entity !== undefined && service !== undefined && { hint: dataHint(entity, service) }),
      });
    }
    default:
      return new ToolError({ reason: 'failed', detail: describeError(error) });
  }
}

function dataHint(entity: EntityInfo, service: string): string {
  const known = (DOMAIN_SERVICES[entity.domain] as readonly string[]).includes(service);
  const fields = known ? serviceFields(entity.domain, service) : [];
  return fields.length === 0 ? `${service} takes no data; leave data out` : `${service} takes ${fields.join(', ')}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
