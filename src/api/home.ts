/**
 * The wire shapes of the home's control methods (entities.*, areas): entities, their states and
 * history, and areas, as the daemon answers them and the CLI, the web page and plugins read them.
 */

/** What kind of thing an entity is; the domain decides its services and states. The list is closed. */
export const ENTITY_DOMAINS = [
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
  'camera',
  'scene',
  'script',
  'climate',
  'media_player',
  'vacuum',
  'person',
  'weather',
] as const;

export type EntityDomain = (typeof ENTITY_DOMAINS)[number];

export type EntityState = string | number | null;

/**
 * Home Assistant's entity categories: `diagnostic` (a battery level, link quality, signal strength,
 * last seen) and `config` (a device's settings) are about the device, not the home; the page shows
 * them under "Diagnostics" and the model's entity list leaves them out unless asked. null: a
 * primary entity.
 */
export const ENTITY_CATEGORIES = ['diagnostic', 'config'] as const;
export type EntityCategory = (typeof ENTITY_CATEGORIES)[number];

/**
 * Home Assistant's sensor state classes: `measurement` (a temperature now), `total` (a value that
 * may go up and down, a net energy meter) and `total_increasing` (a counter that only grows but
 * for a reset to 0: an energy or water meter). Long-term statistics and Home Assistant's energy
 * dashboard read them. null: not a statistic (text, or undeclared).
 */
export const STATE_CLASSES = ['measurement', 'total', 'total_increasing'] as const;
export type StateClass = (typeof STATE_CLASSES)[number];

/**
 * What the owner changed of an entity (homeagentctl entities rename|area|alias, the page's edit
 * dialog). Stored apart from what the driver registers, so it survives restarts and rediscovery;
 * the driver's values stay the defaults underneath.
 */
export interface EntityOverrides {
  /** The owner's name, instead of the driver's. */
  name?: string;
  /** The owner's area id (null: no area), instead of the driver's. */
  area?: string | null;
  /** Aliases the owner added, beside the driver's. */
  aliases_added?: string[];
  /** The driver's aliases the owner removed. */
  aliases_removed?: string[];
}

/** An entity as everyone reads it. */
export interface EntityInfo {
  /** `<domain>.<object_id>`, e.g. `switch.kitchen_light`; lowercase letters, digits and `_`. */
  entity_id: string;
  domain: EntityDomain;
  /** Friendly name ("Kitchen light"). */
  name: string;
  /** Other names people use ("ceiling light"); matched like the name. */
  aliases: string[];
  /** Area id, or null. */
  area: string | null;
  /** The physical device it belongs to (a pin name, a sensor id, a hub device id), or null. */
  device: string | null;
  state: EntityState;
  attributes: Record<string, unknown>;
  /** Unit of a sensor's state (`°C`, `%`, `hPa`, `lx`), or null. */
  unit: string | null;
  /** Home Assistant device class (`temperature`, `door`, `motion`, `outlet`, ...), or null. */
  device_class: string | null;
  /** Epoch ms the state last changed (attributes alone do not change it). */
  last_changed: number;
  /** Epoch ms of the last report, changed or not. */
  last_updated: number;
  /** Who registered it: `plugin:gpio`, `plugin:mqtt`, ... */
  owner: string;
  /** Calls move or unlock something: they need the owner's confirmation when the agent makes them. */
  critical: boolean;
  /** Services it accepts now (its domain's, or fewer when the driver declared fewer). */
  services: string[];
  /** `diagnostic` or `config` for entities about the device rather than the home; null for the rest. */
  entity_category: EntityCategory | null;
  /** How a sensor's number accumulates (see {@link STATE_CLASSES}), or null. */
  state_class: StateClass | null;
  /** What the owner changed (name, area, aliases override the driver's); absent when nothing. */
  overrides?: EntityOverrides;
}

/**
 * Whether an entity belongs in the main view and the model's entity list: diagnostic and config
 * entities (a battery level, link quality, a device setting) are about the device, not the home.
 */
export function isPrimaryEntity(entity: Pick<EntityInfo, 'entity_category'>): boolean {
  return entity.entity_category === null || entity.entity_category === undefined;
}

/** A room or zone. */
export interface Area {
  /** Lowercase letters, digits and `_` (`living_room`). */
  id: string;
  name: string;
  aliases: string[];
  /** The floor it is on ("Ground floor", "二楼"), for "turn off the lights upstairs"; set in core.home.areas. */
  floor?: string;
}

/** One stored state of an entity. Downsampled rows cover `[at, at + period_ms)` and carry min/mean/max for numbers. */
export interface StateHistoryRow {
  entity_id: string;
  at: number;
  state: EntityState;
  /** 0 for a raw report; the bucket length for a downsampled row. */
  period_ms: number;
  min?: number;
  mean?: number;
  max?: number;
}

/** The answer of `entities.get`. */
export interface EntitiesGetResult {
  entity: EntityInfo;
  history: StateHistoryRow[];
}

/** The answer of `entities.history`. */
export interface EntitiesHistoryResult {
  entity_id: string;
  from: number;
  to: number;
  rows: StateHistoryRow[];
}

/** The answer of `entities.statistics`: one row per period (period_ms long), oldest first. */
export interface EntitiesStatisticsResult {
  entity_id: string;
  from: number;
  to: number;
  period_ms: number;
  rows: StateHistoryRow[];
}
