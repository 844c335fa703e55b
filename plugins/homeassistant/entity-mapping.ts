/**
 * Home Assistant entities as HomeAgent entities: which ones come in (exposed to Assist and/or
 * listed, never excluded), which HomeAgent domain each becomes, its name, aliases and area from
 * HA's registries, its state and attributes, and how a HomeAgent service becomes an HA
 * `call_service`. Pure functions: the plugin feeds them what HA answered.
 *
 * What HA reports is device data written by whoever set the house up, not by the owner: names and
 * states are bounded and stripped of control characters before they reach the registry, the agent
 * reads them as tool output (untrusted), and locks, covers, valves and sirens stay critical as
 * local ones are. Alarm panels have no HomeAgent domain and are left to HA: arming and disarming a
 * house is not something to reach through a generic switch.
 */
import {
  DOMAIN_SERVICES,
  ENTITY_CATEGORIES,
  type EntityCategory,
  type EntityDomain,
  type EntityState,
  HomeAgentError,
  STATE_CLASSES,
  STATE_UNAVAILABLE,
  type StateClass,
  slugify,
} from '../../src/sdk/index.js';
import type { HaArea, HaDevice, HaEntityEntry, HaState } from './protocol.js';
import type { HomeassistantSettings } from './settings-schema.js';

/** HA domains that are HomeAgent domains of the same name. */
const SAME_DOMAINS: ReadonlySet<string> = new Set([
  'switch',
  'light',
  'fan',
  'siren',
  'cover',
  'valve',
  'lock',
  'button',
  'number',
  'binary_sensor',
  'sensor',
  'scene',
  'script',
  'climate',
  'media_player',
  'vacuum',
  'person',
  'weather',
]);

/** HA helpers that behave like a HomeAgent domain. */
const HELPER_DOMAINS: Readonly<Record<string, EntityDomain>> = {
  input_boolean: 'switch',
  input_number: 'number',
  input_button: 'button',
};

/** Why an HA domain does not come in, for status. */
const SKIPPED_DOMAINS: Readonly<Record<string, string>> = {
  alarm_control_panel: 'alarm panels stay in Home Assistant (no HomeAgent domain arms or disarms a house)',
  camera: 'cameras stay in Home Assistant (HomeAgent snapshots only its own cameras)',
};

const OBJECT_ID_MAX = 64;
const NAME_MAX = 128;
const ALIASES_MAX = 16;
const ATTRIBUTES_MAX = 32;
const ATTRIBUTE_TEXT_MAX = 256;
const ATTRIBUTE_LIST_MAX = 32;
const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
/** C0/C1 control characters and bidirectional overrides: device text must not steer a terminal or a prompt. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: that is what it removes.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** Attributes that become fields of the entity (or are noise for the agent and the page). */
const NOT_ATTRIBUTES: ReadonlySet<string> = new Set([
  'friendly_name',
  'unit_of_measurement',
  'device_class',
  'state_class',
  'icon',
  'entity_picture',
  'attribution',
  'restored',
]);

/** Which HA entities come in (plugin.homeassistant.expose / include / exclude). */
export type ExposureSettings = Pick<HomeassistantSettings, 'expose' | 'include' | 'exclude'>;

/** True when `entityId` matches one of the patterns: an id, a domain, or `domain.*`. */
export function matchesPattern(entityId: string, patterns: readonly string[]): boolean {
  const domain = entityId.slice(0, entityId.indexOf('.'));
  return patterns.some((p) => p === entityId || p === domain || p === `${domain}.*`);
}

/**
 * Whether an entity comes in. `assisted` is HA's "exposed to Assist" set, or undefined when HA
 * would not say (a token of a user who is not an administrator): then only include counts.
 */
export function isExposed(entityId: string, settings: ExposureSettings, assisted: ReadonlySet<string> | undefined): boolean {
  if (matchesPattern(entityId, settings.exclude)) return false;
  if (matchesPattern(entityId, settings.include)) return true;
  return settings.expose === 'assist' && assisted !== undefined && assisted.has(entityId);
}

/** The HomeAgent domain of an HA entity id, or why it has none. */
export function domainOf(entityId: string): { domain: EntityDomain; haDomain: string } | { skip: string } {
  const haDomain = entityId.slice(0, entityId.indexOf('.'));
  if (SAME_DOMAINS.has(haDomain)) return { domain: haDomain as EntityDomain, haDomain };
  const helper = HELPER_DOMAINS[haDomain];
  if (helper !== undefined) return { domain: helper, haDomain };
  return { skip: SKIPPED_DOMAINS[haDomain] ?? `Home Assistant's ${haDomain} domain has no HomeAgent counterpart` };
}

/** HA's registries, looked up by id. */
export interface HaRegistries {
  areas: ReadonlyMap<string, HaArea>;
  devices: ReadonlyMap<string, HaDevice>;
  entities: ReadonlyMap<string, HaEntityEntry>;
}

export function registriesOf(areas: HaArea[], devices: HaDevice[], entities: HaEntityEntry[]): HaRegistries {
  return {
    areas: new Map(areas.map((a) => [a.area_id, a])),
    devices: new Map(devices.map((d) => [d.id, d])),
    entities: new Map(entities.map((e) => [e.entity_id, e])),
  };
}

/** What the plugin registers for one HA entity (everything but the call handler). */
export interface HaEntityPlan {
  ha_entity_id: string;
  ha_domain: string;
  domain: EntityDomain;
  object_id: string;
  name: string;
  aliases: string[];
  /** HA's area name (the registry makes the id), or null. */
  area: string | null;
  device: string | null;
  unit: string | null;
  device_class: string | null;
  /** From HA's entity registry: its diagnostic and config entities stay that here. */
  entity_category: EntityCategory | null;
  /** HA's `state_class` attribute (sensors); null when HA gives none. */
  state_class: StateClass | null;
  services: string[];
}

/**
 * The plan for an HA state, or why it does not come in. Disabled registry entries never come in;
 * hidden ones do when they were asked for (HA hides entities from its dashboards, not from Assist).
 */
export function planEntity(state: HaState, registries: HaRegistries): HaEntityPlan | { skip: string } {
  const kind = domainOf(state.entity_id);
  if ('skip' in kind) return kind;
  const entry = registries.entities.get(state.entity_id);
  if (entry?.disabled_by) return { skip: `disabled in Home Assistant (${entry.disabled_by})` };
  const device = entry?.device_id ? registries.devices.get(entry.device_id) : undefined;
  const areaId = entry?.area_id ?? device?.area_id ?? null;
  const area = areaId === null ? undefined : registries.areas.get(areaId);
  const objectId = objectIdOf(state.entity_id);
  const name =
    clean(state.attributes.friendly_name, NAME_MAX) ??
    clean(entry?.name, NAME_MAX) ??
    clean(entry?.original_name, NAME_MAX) ??
    objectId.replaceAll('_', ' ');
  const aliases = [...new Set(entry?.aliases.map((a) => clean(a, NAME_MAX)).filter((a): a is string => a !== undefined) ?? [])]
    .filter((a) => a.toLowerCase() !== name.toLowerCase())
    .slice(0, ALIASES_MAX);
  const reportsOnly = DOMAIN_SERVICES[kind.domain].length === 0;
  return {
    ha_entity_id: state.entity_id,
    ha_domain: kind.haDomain,
    domain: kind.domain,
    object_id: objectId,
    name,
    aliases,
    area: area === undefined ? null : (clean(area.name, 64) ?? clean(area.area_id, 64) ?? null),
    device: entry?.device_id ? `homeassistant:${entry.device_id}`.slice(0, 128) : null,
    unit: clean(state.attributes.unit_of_measurement, 32) ?? null,
    device_class: clean(state.attributes.device_class, 64) ?? null,
    entity_category: oneOf(entry?.entity_category, ENTITY_CATEGORIES),
    state_class: kind.domain === 'sensor' ? oneOf(state.attributes.state_class, STATE_CLASSES) : null,
    services: reportsOnly ? [] : servicesOf(kind.domain),
  };
}

/** The value when it is one of `allowed` (what HA sends is not trusted to be), else null. */
function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | null {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : null;
}

/** HA's object id, kept when it fits; a longer one is cut and told apart by a hash of the whole. */
export function objectIdOf(entityId: string): string {
  const raw = entityId.slice(entityId.indexOf('.') + 1);
  const slug = /^[a-z0-9_]+$/.test(raw) ? raw : slugify(raw) || 'entity';
  if (slug.length <= OBJECT_ID_MAX) return slug;
  return `${slug.slice(0, OBJECT_ID_MAX - 7)}_${shortHash(raw)}`;
}

function servicesOf(domain: EntityDomain): string[] {
  // A camera's snapshot is HomeAgent's own service; cameras do not come in anyway.
  return DOMAIN_SERVICES[domain].filter((s) => s !== 'snapshot');
}

/** The HomeAgent state of an HA state. */
export function stateOf(domain: EntityDomain, state: string): EntityState {
  if (state === 'unavailable') return STATE_UNAVAILABLE;
  if (state === 'unknown' || state === '') return null;
  // A scene's and a button's HA state is when it last ran: HomeAgent scenes have no state.
  if (domain === 'scene') return null;
  if ((domain === 'sensor' || domain === 'number') && NUMBER.test(state)) return Number(state);
  return clean(state, 255) ?? null;
}

/** HA's attributes, bounded: scalars and short lists of scalars, text cleaned; the rest dropped. */
export function attributesOf(state: HaState): Record<string, unknown> {
  const out: Record<string, unknown> = { ha_entity_id: state.entity_id };
  let kept = 0;
  for (const [key, value] of Object.entries(state.attributes)) {
    if (kept >= ATTRIBUTES_MAX) break;
    if (NOT_ATTRIBUTES.has(key) || !/^[a-z0-9_]{1,64}$/.test(key)) continue;
    const shown = attributeValue(value);
    if (shown === undefined) continue;
    out[key] = shown;
    kept++;
  }
  return out;
}

function attributeValue(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'boolean' || value === null) return value;
  if (typeof value === 'string') return clean(value, ATTRIBUTE_TEXT_MAX) ?? '';
  if (Array.isArray(value) && value.length <= ATTRIBUTE_LIST_MAX) {
    const items = value.map((v) =>
      typeof v === 'number' || typeof v === 'boolean' ? v : typeof v === 'string' ? clean(v, 64) : undefined,
    );
    return items.every((v) => v !== undefined) ? items : undefined;
  }
  return undefined;
}

/** An HA `call_service` for a HomeAgent service call. */
export interface HaServiceCall {
  domain: string;
  service: string;
  service_data: Record<string, unknown>;
}

/** HomeAgent service names whose HA name differs, per HA domain. */
const SERVICE_NAMES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  cover: { open: 'open_cover', close: 'close_cover', stop: 'stop_cover', set_position: 'set_cover_position' },
  valve: { open: 'open_valve', close: 'close_valve' },
};

/**
 * The HA service for a HomeAgent one. Data was checked by the registry against the HomeAgent
 * service (entity-services.ts) and maps one to one, except play_media's content type, which HA
 * requires.
 */
export function serviceCall(haDomain: string, service: string, data: Record<string, unknown>): HaServiceCall {
  const haService = SERVICE_NAMES[haDomain]?.[service] ?? service;
  const serviceData: Record<string, unknown> = { ...data };
  if (haDomain === 'media_player' && service === 'play_media' && serviceData.media_content_type === undefined) {
    serviceData.media_content_type = 'music';
  }
  if (haDomain === 'input_boolean' && !['turn_on', 'turn_off', 'toggle'].includes(service)) throw noService(haDomain, service);
  if (haDomain === 'input_number' && service !== 'set_value') throw noService(haDomain, service);
  if (haDomain === 'input_button' && service !== 'press') throw noService(haDomain, service);
  return { domain: haDomain, service: haService, service_data: serviceData };
}

function noService(haDomain: string, service: string): HomeAgentError {
  return new HomeAgentError('HA_ERR_ENTITY_SERVICE', `Home Assistant's ${haDomain} has no service ${service}`);
}

/** Text from another program, fit for a name or a state: control characters gone, trimmed, bounded. */
export function clean(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
  if (text === '') return undefined;
  return [...text].slice(0, max).join('');
}

function shortHash(text: string): string {
  // FNV-1a: a stable tag to tell two long ids apart, not a security measure.
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36).padStart(6, '0').slice(-6);
}
