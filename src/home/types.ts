/**
 * The home vocabulary: entities, their domains and services, areas, and the context that says who
 * caused a state change. The entity registry (entity-registry.ts) is the one place that the agent,
 * local intents, automations, MQTT and the web page read and change device state; device drivers
 * and plugins register entities through the SDK (`ctx.entities`) and report their state there.
 */
import type { EntityCategory, EntityDomain, EntityState, StateClass } from '../api/home.js';

export {
  type Area,
  ENTITY_CATEGORIES,
  ENTITY_DOMAINS,
  type EntityCategory,
  type EntityDomain,
  type EntityInfo,
  type EntityOverrides,
  type EntityState,
  isPrimaryEntity,
  STATE_CLASSES,
  type StateClass,
  type StateHistoryRow,
} from '../api/home.js';

/**
 * The services each domain offers (`entity_call` and automations use these names). A sensor, a
 * binary sensor, a person and the weather only report. Data per service (entity-services.ts checks it):
 * - light turn_on: `brightness` 0-255, `color_name` (a lowercase English colour name, "red",
 *   "warm white"), both optional; fan turn_on / set_percentage: `percentage` 0-100;
 * - cover set_position: `position` 0-100; number set_value: `value`;
 * - climate set_temperature: `temperature` (the target, in the entity's unit) -50-100;
 * - media_player volume_set: `volume_level` 0-1; play_media: `media_content_id` (what to play: a
 *   URL, a title, a playlist id) and optionally `media_content_type` (`music`, `playlist`, ...);
 * - every other service takes no data.
 *
 * States and attributes follow Home Assistant's conventions, so that intents, automations and
 * MQTT read them the same way whoever drives the device:
 * - scene: state null (a scene is only run, it has no state of its own);
 * - script: `on` while it runs, else `off`;
 * - climate: the hvac mode (`off`, `heat`, `cool`, `auto`, `heat_cool`, `dry`, `fan_only`);
 *   attributes `current_temperature` (measured) and `temperature` (target), numbers;
 * - media_player: `off`, `on`, `idle`, `playing`, `paused` or `standby`; attributes
 *   `volume_level` 0-1 and `media_title`;
 * - vacuum: `cleaning`, `docked`, `returning`, `idle`, `paused` or `error`;
 * - person: `home`, `not_home` or the name of the zone they are in;
 * - weather: the condition (`sunny`, `cloudy`, `rainy`, `snowy`, `fog`, `windy`, `partlycloudy`,
 *   `clear-night`, ...); attributes `temperature`, `humidity`, `temperature_unit`, `wind_speed`;
 * - camera: `idle` (Home Assistant's state for a camera that is not streaming); snapshot stores a
 *   picture in the media store and sets the attributes `last_picture_digest` (sha256),
 *   `last_picture_at` (ISO time), `width`, `height` and `bytes` (the state stays `idle`).
 */
export const DOMAIN_SERVICES: Readonly<Record<EntityDomain, readonly string[]>> = {
  switch: ['turn_on', 'turn_off', 'toggle'],
  light: ['turn_on', 'turn_off', 'toggle'],
  fan: ['turn_on', 'turn_off', 'toggle', 'set_percentage'],
  siren: ['turn_on', 'turn_off', 'toggle'],
  cover: ['open', 'close', 'stop', 'set_position'],
  valve: ['open', 'close'],
  lock: ['lock', 'unlock'],
  button: ['press'],
  number: ['set_value'],
  binary_sensor: [],
  sensor: [],
  camera: ['snapshot'],
  scene: ['turn_on'],
  script: ['turn_on', 'turn_off'],
  climate: ['turn_on', 'turn_off', 'set_temperature'],
  media_player: [
    'turn_on',
    'turn_off',
    'media_play',
    'media_pause',
    'media_next_track',
    'media_previous_track',
    'volume_set',
    'play_media',
  ],
  vacuum: ['start', 'pause', 'stop', 'return_to_base'],
  person: [],
  weather: [],
};

/**
 * Domains whose calls move or unlock something: `entity_call` on them is a dangerous tool call (asks
 * the owner first). Climate, media players and vacuums are not: a wrong call there is a nuisance
 * the person undoes, not an open door.
 */
export const CRITICAL_DOMAINS: readonly EntityDomain[] = ['lock', 'cover', 'valve', 'siren'];

/** Common states. Sensors hold numbers; `null` is unknown (not reported yet). */
export const STATE_ON = 'on';
export const STATE_OFF = 'off';
/** The device does not answer (a sensor past its failure limit, a hub device gone). */
export const STATE_UNAVAILABLE = 'unavailable';

/**
 * Who caused a call or a state change. It travels from `call()` to the state change it causes,
 * so an automation can tell a change made by its own actions (and rate-limit re-triggering).
 */
export interface EntityContext {
  /** `agent`, `cli`, `automation:<id>`, `plugin:<name>`, `device`, `intent`, `mqtt`, ... */
  actor: string;
  /** Automations: the run that made the call. */
  run_id?: string;
}

/** What a driver or plugin declares when it registers an entity. */
export interface EntityDefinition {
  domain: EntityDomain;
  /** The part after the dot: `kitchen_light`. Lowercase letters, digits and `_`, 1-64 characters. */
  object_id: string;
  name: string;
  aliases?: string[];
  /** Area id or name; an unknown area is created from it. */
  area?: string | null;
  device?: string | null;
  unit?: string | null;
  device_class?: string | null;
  /**
   * `diagnostic` (battery, link quality, signal strength, last seen, a hub device's own
   * temperature) or `config` (a setting of the device): kept out of the page's main view and the
   * model's entity list. Absent: null, a primary entity.
   */
  entity_category?: EntityCategory | null;
  /**
   * How a sensor's number accumulates: `measurement`, `total`, or `total_increasing` (a meter).
   * Absent: `total_increasing` for the meter classes energy, gas and water, `measurement` for
   * another numeric sensor with a unit, else null (see {@link defaultStateClass}).
   */
  state_class?: StateClass | null;
  attributes?: Record<string, unknown>;
  /** The state right after registration; absent: the last state stored for this entity, else null. */
  initial_state?: EntityState;
  /** Overrides the domain's default in {@link CRITICAL_DOMAINS}. */
  critical?: boolean;
  /** Only these of the domain's services (a momentary relay that only pulses: `['toggle']`). */
  services?: string[];
  /**
   * Carries out a service. The new state is reported through the handle's `update()` (during the
   * call or later); the registry links updates made while the call runs to its context. Throwing
   * a HomeAgentError fails the call with that error. Absent: the entity only reports.
   */
  call?(service: string, data: Record<string, unknown>, context: EntityContext): Promise<void>;
}

/** What `register()` returns to the owner of an entity. */
export interface EntityHandle {
  readonly entity_id: string;
  /** Reports a state (and optionally attributes, merged); a report equal to the current state only touches last_updated. */
  update(state: EntityState, attributes?: Record<string, unknown>): void;
  /** Removes the entity (its history stays). */
  remove(): void;
}

/** Device classes whose sensors are meters: their value only grows (until the meter is reset). */
export const METER_DEVICE_CLASSES: readonly string[] = ['energy', 'gas', 'water'];

/**
 * The state class a sensor gets when its driver declares none: meters (energy, gas, water) count
 * up, any other sensor or number with a unit is a measurement; the rest (text, no unit) is none.
 */
export function defaultStateClass(domain: EntityDomain, deviceClass: string | null, unit: string | null): StateClass | null {
  if (domain !== 'sensor') return null;
  if (deviceClass !== null && METER_DEVICE_CLASSES.includes(deviceClass)) return 'total_increasing';
  return unit === null ? null : 'measurement';
}

export interface EntityFilter {
  domain?: EntityDomain;
  /** Area id or name. */
  area?: string;
  owner?: string;
}
