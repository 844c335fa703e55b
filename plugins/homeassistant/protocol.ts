/**
 * Home Assistant's WebSocket API as HomeAgent speaks it (developers.home-assistant.io, "WebSocket
 * API"): the server opens with `auth_required`, the client answers `auth` with its access token,
 * the server says `auth_ok` or `auth_invalid`; after that every client command carries a fresh
 * integer `id` and is answered by a `result` (success true with `result`, or false with
 * `error: {code, message}`) or, for `ping`, a `pong` with the same id. A subscription's events
 * arrive as `event` messages with the id of the command that subscribed.
 *
 * Everything read here comes from another program over the network: frames are checked field by
 * field, and whatever does not fit is "not this kind of message", never an exception.
 */

/** An entity's state as `get_states` and `state_changed` carry it. */
export interface HaState {
  entity_id: string;
  state: string;
  attributes: Record<string, unknown>;
  last_changed?: string;
  last_updated?: string;
}

export interface HaArea {
  area_id: string;
  name: string;
  aliases: string[];
  floor_id: string | null;
}

export interface HaDevice {
  id: string;
  name: string | null;
  name_by_user: string | null;
  area_id: string | null;
  manufacturer: string | null;
  model: string | null;
}

/** An entry of the entity registry (`config/entity_registry/list`). */
export interface HaEntityEntry {
  entity_id: string;
  name: string | null;
  original_name: string | null;
  area_id: string | null;
  device_id: string | null;
  aliases: string[];
  disabled_by: string | null;
  hidden_by: string | null;
  entity_category: string | null;
}

export type ServerMessage =
  | { type: 'auth_required'; ha_version: string | undefined }
  | { type: 'auth_ok'; ha_version: string | undefined }
  | { type: 'auth_invalid'; message: string }
  | { type: 'result'; id: number; success: true; result: unknown }
  | { type: 'result'; id: number; success: false; error: { code: string; message: string } }
  | { type: 'pong'; id: number }
  | { type: 'event'; id: number; event: unknown };

/** Reads one frame's text; undefined when it is not a message HomeAgent knows. */
export function parseServerMessage(text: string): ServerMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return readServerMessage(value);
}

export function readServerMessage(value: unknown): ServerMessage | undefined {
  if (!isRecord(value) || typeof value.type !== 'string') return undefined;
  const version = typeof value.ha_version === 'string' ? value.ha_version : undefined;
  switch (value.type) {
    case 'auth_required':
      return { type: 'auth_required', ha_version: version };
    case 'auth_ok':
      return { type: 'auth_ok', ha_version: version };
    case 'auth_invalid':
      return { type: 'auth_invalid', message: typeof value.message === 'string' ? value.message : 'the token was refused' };
  }
  if (!isCommandId(value.id)) return undefined;
  const id = value.id;
  switch (value.type) {
    case 'pong':
      return { type: 'pong', id };
    case 'event':
      return { type: 'event', id, event: value.event };
    case 'result': {
      if (value.success === true) return { type: 'result', id, success: true, result: value.result ?? null };
      if (value.success !== false) return undefined;
      const error = isRecord(value.error) ? value.error : {};
      return {
        type: 'result',
        id,
        success: false,
        error: {
          code: typeof error.code === 'string' ? error.code : 'unknown_error',
          message: typeof error.message === 'string' ? error.message : 'Home Assistant gave no reason',
        },
      };
    }
  }
  return undefined;
}

/** The client's messages. Commands get their id from the connection. */
export function authMessage(token: string): { type: 'auth'; access_token: string } {
  return { type: 'auth', access_token: token };
}

export type Command =
  | { type: 'get_states' }
  | { type: 'subscribe_events'; event_type: string }
  | { type: 'config/area_registry/list' }
  | { type: 'config/device_registry/list' }
  | { type: 'config/entity_registry/list' }
  | { type: 'homeassistant/expose_entity/list' }
  | { type: 'ping' }
  | {
      type: 'call_service';
      domain: string;
      service: string;
      service_data?: Record<string, unknown>;
      target: { entity_id: string };
    };

/** An `event` of a `subscribe_events state_changed` subscription, or undefined when it is not one. */
export function readStateChanged(event: unknown): { entity_id: string; new_state: HaState | null } | undefined {
  if (!isRecord(event) || event.event_type !== 'state_changed' || !isRecord(event.data)) return undefined;
  const entityId = event.data.entity_id;
  if (typeof entityId !== 'string') return undefined;
  // A removed entity's event has new_state null.
  if (event.data.new_state === null) return { entity_id: entityId, new_state: null };
  const state = readState(event.data.new_state);
  return state === undefined || state.entity_id !== entityId ? undefined : { entity_id: entityId, new_state: state };
}

export function readState(value: unknown): HaState | undefined {
  if (!isRecord(value) || typeof value.entity_id !== 'string' || typeof value.state !== 'string') return undefined;
  return {
    entity_id: value.entity_id,
    state: value.state,
    attributes: isRecord(value.attributes) ? value.attributes : {},
    ...(typeof value.last_changed === 'string' ? { last_changed: value.last_changed } : {}),
    ...(typeof value.last_updated === 'string' ? { last_updated: value.last_updated } : {}),
  };
}

/** `get_states`' result: the states that can be read (the others are counted by the caller). */
export function readStates(result: unknown): { states: HaState[]; unreadable: number } {
  const list = Array.isArray(result) ? result : [];
  const states: HaState[] = [];
  for (const entry of list) {
    const state = readState(entry);
    if (state !== undefined) states.push(state);
  }
  return { states, unreadable: list.length - states.length };
}

export function readAreas(result: unknown): HaArea[] {
  return listOf(result, (v) =>
    typeof v.area_id === 'string' && typeof v.name === 'string'
      ? { area_id: v.area_id, name: v.name, aliases: strings(v.aliases), floor_id: text(v.floor_id) }
      : undefined,
  );
}

export function readDevices(result: unknown): HaDevice[] {
  return listOf(result, (v) =>
    typeof v.id === 'string'
      ? {
          id: v.id,
          name: text(v.name),
          name_by_user: text(v.name_by_user),
          area_id: text(v.area_id),
          manufacturer: text(v.manufacturer),
          model: text(v.model),
        }
      : undefined,
  );
}

export function readEntityEntries(result: unknown): HaEntityEntry[] {
  return listOf(result, (v) =>
    typeof v.entity_id === 'string'
      ? {
          entity_id: v.entity_id,
          name: text(v.name),
          original_name: text(v.original_name),
          area_id: text(v.area_id),
          device_id: text(v.device_id),
          aliases: strings(v.aliases),
          disabled_by: text(v.disabled_by),
          hidden_by: text(v.hidden_by),
          entity_category: text(v.entity_category),
        }
      : undefined,
  );
}

/** `homeassistant/expose_entity/list`: the entity ids exposed to Assist (the `conversation` assistant). */
export function readExposedToAssist(result: unknown): Set<string> {
  const exposed = new Set<string>();
  const entities = isRecord(result) && isRecord(result.exposed_entities) ? result.exposed_entities : {};
  for (const [entityId, flags] of Object.entries(entities)) {
    if (isRecord(flags) && flags.conversation === true) exposed.add(entityId);
  }
  return exposed;
}

function isCommandId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function listOf<T>(result: unknown, read: (value: Record<string, unknown>) => T | undefined): T[] {
  if (!Array.isArray(result)) return [];
  const out: T[] = [];
  for (const entry of result) {
    if (!isRecord(entry)) continue;
    const item = read(entry);
    if (item !== undefined) out.push(item);
  }
  return out;
}
