/**
 * Zigbee2MQTT device definitions → HomeAgent entities, as pure data and functions (no broker, no
 * registry), so every mapping rule can be tested on recorded `bridge/devices` payloads. The bridge
 * (zigbee2mqtt-bridge.ts) registers what this plans and feeds it the device's state messages.
 *
 * Z2M describes a device by its `exposes` (docs: zigbee2mqtt.io/guide/usage/exposes.html):
 * - specific types (`light`, `switch`, `lock`, `cover`, `fan`, `climate`) carry `features`;
 * - generic types (`binary`, `numeric`, `enum`, `text`, `composite`, `list`) carry one `property`,
 *   the key of that value in the device's state JSON (`state_l1` when the expose has an endpoint);
 * - `access` is a bit mask: 1 the value is published in the state, 2 it can be `/set`, 4 `/get`.
 *
 * One entity per specific expose (a two-gang switch has two `switch` exposes with endpoints l1 and
 * l2, hence two entities) and per generic expose that is published, except the noise: link
 * quality, settings (`category: config`), composites and lists. docs/mqtt.md ("Zigbee2MQTT")
 * holds the full table; keep the two in step.
 *
 * Exposes Z2M marks `category: diagnostic`, and the battery and the device's own temperature, are
 * entities of category `diagnostic`: about the device, not the home (the page shows them under
 * Diagnostics, the model's list leaves them out). Settings stay out altogether rather than coming
 * in as `config` entities: they would be switches and numbers the agent could flip (a power-on
 * behaviour, a child lock), and Zigbee2MQTT's own front end is the place to configure a device.
 */
import {
  type EntityDefinition,
  type EntityDomain,
  type EntityState,
  HomeAgentError,
  STATE_OFF,
  STATE_ON,
  slugify,
} from '../../src/sdk/index.js';

/** Access bits of an expose. */
export const ACCESS_STATE = 0b001;
export const ACCESS_SET = 0b010;

/** One expose as `bridge/devices` carries it (only the fields read here). */
export interface Z2mExpose {
  type: string;
  name?: string;
  label?: string;
  property?: string;
  endpoint?: string;
  access?: number;
  category?: string;
  unit?: string;
  value_on?: unknown;
  value_off?: unknown;
  value_toggle?: unknown;
  value_min?: number;
  value_max?: number;
  value_step?: number;
  values?: unknown[];
  features?: Z2mExpose[];
}

/** One entry of the retained `bridge/devices` array (only the fields read here). */
export interface Z2mDevice {
  ieee_address: string;
  friendly_name: string;
  /** `Coordinator`, `Router` or `EndDevice`. */
  type?: string;
  supported?: boolean;
  disabled?: boolean;
  interview_completed?: boolean;
  /** Z2M 2.x: `PENDING`, `IN_PROGRESS`, `SUCCESSFUL` or `FAILED`. */
  interview_state?: string;
  definition?: { model?: string; vendor?: string; description?: string; exposes?: unknown[] } | null;
}

/** What a state message says about one entity; either part may be absent. */
export interface Z2mReading {
  state?: EntityState;
  attributes?: Record<string, unknown>;
}

/** One entity to register for a device, with how to read its state and build its commands. */
export interface Z2mEntityPlan {
  /** Stable within the device across renames (`light:state_l1`): carries the last state over. */
  key: string;
  /** Everything the registry needs but the call handler (the bridge adds it when `command` is set). */
  definition: Omit<EntityDefinition, 'call' | 'initial_state'>;
  /** State-message keys this entity reads; one of them arriving confirms a command. */
  properties: readonly string[];
  /** The entity's reading from a state message, or undefined when the message says nothing about it. */
  read(message: Readonly<Record<string, unknown>>): Z2mReading | undefined;
  /** The `/set` JSON for a service (data already checked by the registry); absent: reports only. */
  command?(service: string, data: Readonly<Record<string, unknown>>, current: EntityState): Record<string, unknown>;
  /**
   * An event, not a level (a button's `action`): every message is news, so a repeat of the current
   * value must still reach state triggers (the bridge passes through null to make it a change).
   */
  event?: boolean;
}

/** Why a device gets no entities, or undefined when it gets them. */
export function skipReason(device: Z2mDevice): string | undefined {
  if (device.type === 'Coordinator') return 'it is the coordinator';
  if (device.disabled === true) return 'it is disabled in Zigbee2MQTT';
  if (device.interview_completed === false || (typeof device.interview_state === 'string' && device.interview_state !== 'SUCCESSFUL')) {
    return 'its interview has not completed';
  }
  if (device.supported === false) return 'Zigbee2MQTT does not support it';
  if (!device.definition || !Array.isArray(device.definition.exposes)) return 'it has no definition';
  return undefined;
}

/** A `bridge/devices` entry, or undefined when it lacks the identity every other field hangs on. */
export function readDevice(value: unknown): Z2mDevice | undefined {
  if (!isRecord(value)) return undefined;
  const { ieee_address, friendly_name } = value;
  if (typeof ieee_address !== 'string' || ieee_address === '' || typeof friendly_name !== 'string' || friendly_name === '') {
    return undefined;
  }
  return value as unknown as Z2mDevice;
}

/**
 * Z2M has no areas, but its docs suggest `/` to structure friendly names (`kitchen/ceiling`): the
 * first level of a name with several is taken as the area and the rest as the name, so "kitchen
 * ceiling" finds it the way it finds any entity named "ceiling" in the kitchen.
 */
export function splitFriendlyName(friendlyName: string): { area: string | null; name: string } {
  const levels = friendlyName
    .split('/')
    .map((level) => level.trim())
    .filter((level) => level !== '');
  if (levels.length < 2) return { area: null, name: humanize(levels[0] ?? friendlyName) };
  return { area: levels[0] as string, name: humanize(levels.slice(1).join(' ')) };
}

/** The object id every entity of the device starts with: the friendly name's slug, else the IEEE address's. */
export function deviceBase(device: Pick<Z2mDevice, 'friendly_name' | 'ieee_address'>): string {
  return slugify(device.friendly_name) || slugify(device.ieee_address) || 'zigbee';
}

/** HomeAgent brightness 0-255 → Z2M's 0-254 (rounded; 255 → 254, 128 → 127). */
export function brightnessToZ2m(brightness: number): number {
  return Math.min(254, Math.max(0, Math.round((brightness * 254) / 255)));
}

/** Z2M brightness 0-254 → HomeAgent's 0-255 (rounded; 254 → 255, 127 → 128): a round trip keeps the value. */
export function brightnessFromZ2m(brightness: number): number {
  return Math.min(255, Math.max(0, Math.round((brightness * 255) / 254)));
}

/** Numeric exposes (by name) → sensor device class. `illuminance` only in lux (else it is a raw reading). */
const SENSOR_CLASSES: Readonly<Record<string, string>> = {
  temperature: 'temperature',
  device_temperature: 'temperature',
  local_temperature: 'temperature',
  humidity: 'humidity',
  pressure: 'pressure',
  illuminance: 'illuminance',
  illuminance_lux: 'illuminance',
  battery: 'battery',
  voltage: 'voltage',
  current: 'current',
  power: 'power',
  energy: 'energy',
  co2: 'carbon_dioxide',
  eco2: 'carbon_dioxide',
  co: 'carbon_monoxide',
  pm1: 'pm1',
  pm10: 'pm10',
  pm25: 'pm25',
  voc: 'volatile_organic_compounds',
  soil_moisture: 'moisture',
  ac_frequency: 'frequency',
  power_factor: 'power_factor',
  power_apparent: 'apparent_power',
  power_reactive: 'reactive_power',
  noise: 'sound_pressure',
};

/** Binary exposes (by name) → binary_sensor device class. */
const BINARY_CLASSES: Readonly<Record<string, string>> = {
  contact: 'door',
  occupancy: 'motion',
  presence: 'occupancy',
  water_leak: 'moisture',
  smoke: 'smoke',
  gas: 'gas',
  carbon_monoxide: 'carbon_monoxide',
  vibration: 'vibration',
  tamper: 'tamper',
  battery_low: 'battery',
  moving: 'moving',
  sos: 'safety',
  noise_detected: 'sound',
};

/** Exposes about the device itself, whatever their category says (older converters leave it out). */
const DIAGNOSTIC_NAMES: ReadonlySet<string> = new Set(['battery', 'battery_low', 'device_temperature']);

/** The registry's limit for names, aliases and areas. */
const MAX_NAME_CHARS = 128;
/** Published in every message and meaningless to a household: not an entity. */
const IGNORED_NAMES: ReadonlySet<string> = new Set(['linkquality', 'update_available']);

/** The entities of one device (none when {@link skipReason} gives a reason). `base` overrides the object id prefix. */
export function planDeviceEntities(device: Z2mDevice, base = deviceBase(device)): Z2mEntityPlan[] {
  if (skipReason(device) !== undefined) return [];
  const { area, name } = splitFriendlyName(device.friendly_name);
  const raw = device.friendly_name.trim();
  const context: DeviceContext = {
    base,
    name,
    area,
    ieee: device.ieee_address,
    aliases: raw !== name && !raw.includes('/') && raw.length <= MAX_NAME_CHARS ? [raw] : [],
    attributes: {
      ieee_address: device.ieee_address,
      ...(typeof device.definition?.model === 'string' ? { model: device.definition.model } : {}),
      ...(typeof device.definition?.vendor === 'string' ? { vendor: device.definition.vendor } : {}),
    },
  };
  const plans: Z2mEntityPlan[] = [];
  const taken = new Set<string>();
  const add = (plan: Z2mEntityPlan | undefined) => {
    if (plan === undefined) return;
    // Two exposes on one property (an old converter listing illuminance twice) would be one entity twice.
    const id = `${plan.definition.domain}.${plan.definition.object_id}`;
    if (taken.has(id) || taken.has(plan.key)) return;
    taken.add(id);
    taken.add(plan.key);
    plans.push(plan);
  };
  for (const item of device.definition?.exposes ?? []) {
    const expose = readExpose(item);
    if (expose === undefined) continue;
    switch (expose.type) {
      case 'light':
        add(planLight(context, expose));
        break;
      case 'switch':
        add(planOnOff(context, expose));
        break;
      case 'lock':
        add(planLock(context, expose));
        break;
      case 'cover':
        add(planCover(context, expose));
        break;
      case 'fan':
        add(planFan(context, expose));
        break;
      case 'climate':
        // No climate domain: its readings and set points become sensors and numbers of their own.
        for (const feature of features(expose)) add(planGeneric(context, feature));
        break;
      default:
        add(planGeneric(context, expose));
    }
  }
  return plans;
}

interface DeviceContext {
  base: string;
  name: string;
  area: string | null;
  ieee: string;
  aliases: string[];
  attributes: Record<string, unknown>;
}

// ---- specific exposes ----

function planLight(device: DeviceContext, expose: Z2mExpose): Z2mEntityPlan | undefined {
  const state = feature(expose, 'state', 'binary');
  if (state?.property === undefined) return undefined;
  const brightness = feature(expose, 'brightness', 'numeric');
  const colorTemp = feature(expose, 'color_temp', 'numeric');
  const stateProperty = state.property;
  const dimmable = brightness?.property !== undefined && has(brightness, ACCESS_SET);
  const properties = [stateProperty, brightness?.property, colorTemp?.property].filter((p): p is string => p !== undefined);
  const suffix = expose.endpoint;
  return {
    key: `light:${stateProperty}`,
    definition: definition(device, 'light', suffix, suffix, has(state, ACCESS_SET) ? ['turn_on', 'turn_off', 'toggle'] : []),
    properties,
    read(message) {
      const attributes: Record<string, unknown> = {};
      if (brightness?.property !== undefined) {
        const value = message[brightness.property];
        if (typeof value === 'number' && Number.isFinite(value)) attributes.brightness = brightnessFromZ2m(value);
      }
      if (colorTemp?.property !== undefined) {
        const value = message[colorTemp.property];
        if (typeof value === 'number' && Number.isFinite(value)) attributes.color_temp = value;
      }
      return reading(binaryState(state, message[stateProperty]), attributes);
    },
    ...(has(state, ACCESS_SET)
      ? {
          command(service, data, current) {
            if (service !== 'turn_on') return { [stateProperty]: onOffCommand(state, service, current) };
            const wanted = data.brightness;
            if (wanted === undefined) return { [stateProperty]: state.value_on ?? 'ON' };
            // Brightness 0 means off, as in Home Assistant (and the GPIO driver).
            if (wanted === 0) return { [stateProperty]: state.value_off ?? 'OFF' };
            if (!dimmable || brightness?.property === undefined) {
              throw new HomeAgentError('HA_ERR_ENTITY_SERVICE', `${device.name} cannot be dimmed: turn it on without brightness`, {
                details: { field: 'data.brightness' },
              });
            }
            return { [stateProperty]: state.value_on ?? 'ON', [brightness.property]: brightnessToZ2m(wanted as number) };
          },
        }
      : {}),
  };
}

/** A `switch` expose, or a settable generic binary shown as a switch. */
function planOnOff(device: DeviceContext, expose: Z2mExpose): Z2mEntityPlan | undefined {
  const state = expose.type === 'binary' ? expose : features(expose).find((f) => f.type === 'binary');
  if (state?.property === undefined) return undefined;
  const stateProperty = state.property;
  // `state` / `state_l1` is the device itself; another property (`away_mode`) is a switch beside it.
  const own = expose.type === 'switch' && isPlainState(state);
  const suffix = own ? expose.endpoint : stateProperty;
  const label = own ? expose.endpoint : sideLabel(expose, state);
  return {
    key: `switch:${stateProperty}`,
    definition: definition(device, 'switch', suffix, label, has(state, ACCESS_SET) ? ['turn_on', 'turn_off', 'toggle'] : []),
    properties: [stateProperty],
    read: (message) => reading(binaryState(state, message[stateProperty])),
    ...(has(state, ACCESS_SET)
      ? { command: (service: string, _data: unknown, current: EntityState) => ({ [stateProperty]: onOffCommand(state, service, current) }) }
      : {}),
  };
}

function planLock(device: DeviceContext, expose: Z2mExpose): Z2mEntityPlan | undefined {
  const state = features(expose).find((f) => f.type === 'binary');
  if (state?.property === undefined) return undefined;
  const lockState = feature(expose, 'lock_state', 'enum');
  const stateProperty = state.property;
  const own = isPlainState(state);
  const suffix = own ? expose.endpoint : stateProperty;
  const label = own ? expose.endpoint : sideLabel(expose, state);
  return {
    key: `lock:${stateProperty}`,
    definition: definition(device, 'lock', suffix, label, has(state, ACCESS_SET) ? ['lock', 'unlock'] : []),
    properties: [stateProperty, ...(lockState?.property === undefined ? [] : [lockState.property])],
    read(message) {
      const on = binaryState(state, message[stateProperty]);
      const locked = on === STATE_ON ? 'locked' : on === STATE_OFF ? 'unlocked' : on;
      const detail = lockState?.property === undefined ? undefined : message[lockState.property];
      return reading(locked, typeof detail === 'string' ? { lock_state: detail } : {});
    },
    ...(has(state, ACCESS_SET)
      ? {
          command: (service: string) => ({
            [stateProperty]: service === 'lock' ? (state.value_on ?? 'LOCK') : (state.value_off ?? 'UNLOCK'),
          }),
        }
      : {}),
  };
}

function planCover(device: DeviceContext, expose: Z2mExpose): Z2mEntityPlan | undefined {
  const state = features(expose).find((f) => f.name === 'state' && (f.type === 'enum' || f.type === 'binary'));
  const position = feature(expose, 'position', 'numeric');
  const tilt = feature(expose, 'tilt', 'numeric');
  if (state?.property === undefined && position?.property === undefined) return undefined;
  const stateProperty = state?.property;
  const positionProperty = position?.property;
  const services: string[] = [];
  // Older converters declare the state binary OPEN/CLOSE (no STOP); newer ones an enum OPEN/CLOSE/STOP.
  if (state !== undefined && has(state, ACCESS_SET)) {
    services.push('open', 'close');
    if (state.type === 'enum' && (state.values ?? []).includes('STOP')) services.push('stop');
  }
  if (position !== undefined && has(position, ACCESS_SET)) services.push('set_position');
  const properties = [stateProperty, positionProperty, tilt?.property].filter((p): p is string => p !== undefined);
  return {
    key: `cover:${stateProperty ?? positionProperty}`,
    definition: definition(device, 'cover', expose.endpoint, expose.endpoint, services),
    properties,
    read(message) {
      const attributes: Record<string, unknown> = {};
      let coverState: EntityState | undefined;
      const at = positionProperty === undefined ? undefined : message[positionProperty];
      if (typeof at === 'number' && Number.isFinite(at)) {
        attributes.position = at;
        // Z2M reports 100 as fully open (its invert_cover option already applied).
        coverState = at > 0 ? 'open' : 'closed';
      } else if (stateProperty !== undefined) {
        const word = message[stateProperty];
        if (word === 'OPEN') coverState = 'open';
        else if (word === 'CLOSE' || word === 'CLOSED') coverState = 'closed';
      }
      if (tilt?.property !== undefined) {
        const value = message[tilt.property];
        if (typeof value === 'number' && Number.isFinite(value)) attributes.tilt = value;
      }
      return reading(coverState, attributes);
    },
    ...(services.length > 0
      ? {
          command(service: string, data: Readonly<Record<string, unknown>>) {
            if (service === 'set_position' && positionProperty !== undefined) return { [positionProperty]: data.position };
            const word = service === 'open' ? 'OPEN' : service === 'close' ? 'CLOSE' : 'STOP';
            return { [stateProperty as string]: word };
          },
        }
      : {}),
  };
}

/** Speed words of a mode-controlled fan, slowest first; the percentage is their place in this list. */
const FAN_SPEEDS = ['low', 'medium', 'high'] as const;

function planFan(device: DeviceContext, expose: Z2mExpose): Z2mEntityPlan | undefined {
  const state = features(expose).find((f) => f.type === 'binary' && f.name === 'state');
  if (state?.property === undefined) return undefined;
  const stateProperty = state.property;
  const mode = feature(expose, 'mode', 'enum');
  const speed = feature(expose, 'speed', 'numeric');
  const speeds = FAN_SPEEDS.filter((s) => (mode?.values ?? []).includes(s));
  const maxSpeed = speed?.value_max ?? 254;
  const minSpeed = Math.max(1, speed?.value_min ?? 1);
  const bySpeed = speed?.property !== undefined && has(speed, ACCESS_SET);
  const byMode = !bySpeed && mode?.property !== undefined && has(mode, ACCESS_SET) && speeds.length > 0;
  const settable = has(state, ACCESS_SET);
  const services = settable ? ['turn_on', 'turn_off', 'toggle'] : [];
  if (bySpeed || byMode) services.push('set_percentage');
  const properties = [stateProperty, mode?.property, speed?.property].filter((p): p is string => p !== undefined);
  /** The /set JSON for a percentage above 0. */
  const toPercentage = (percentage: number): Record<string, unknown> => {
    if (bySpeed && speed?.property !== undefined) {
      return { [stateProperty]: state.value_on ?? 'ON', [speed.property]: Math.max(minSpeed, Math.round((percentage * maxSpeed) / 100)) };
    }
    const index = Math.min(speeds.length - 1, Math.max(0, Math.ceil((percentage / 100) * speeds.length) - 1));
    return { [mode?.property as string]: speeds[index] };
  };
  return {
    key: `fan:${stateProperty}`,
    definition: definition(device, 'fan', expose.endpoint, expose.endpoint, services),
    properties,
    read(message) {
      const attributes: Record<string, unknown> = {};
      const modeValue = mode?.property === undefined ? undefined : message[mode.property];
      if (typeof modeValue === 'string') {
        attributes.mode = modeValue;
        const at = (speeds as readonly string[]).indexOf(modeValue);
        if (at >= 0) attributes.percentage = Math.round(((at + 1) * 100) / speeds.length);
        else if (modeValue === 'off') attributes.percentage = 0;
      }
      const speedValue = speed?.property === undefined ? undefined : message[speed.property];
      if (typeof speedValue === 'number' && Number.isFinite(speedValue)) {
        attributes.percentage = Math.min(100, Math.max(0, Math.round((speedValue * 100) / maxSpeed)));
      }
      return reading(binaryState(state, message[stateProperty]), attributes);
    },
    ...(services.length > 0
      ? {
          command(service: string, data: Readonly<Record<string, unknown>>, current: EntityState) {
            const percentage = data.percentage as number | undefined;
            if (service === 'set_percentage' || (service === 'turn_on' && percentage !== undefined)) {
              if (percentage === 0) return { [stateProperty]: state.value_off ?? 'OFF' };
              if (!bySpeed && !byMode) {
                throw new HomeAgentError('HA_ERR_ENTITY_SERVICE', `${device.name} has no speeds: turn it on without percentage`, {
                  details: { field: 'data.percentage' },
                });
              }
              return toPercentage(percentage as number);
            }
            return { [stateProperty]: onOffCommand(state, service, current) };
          },
        }
      : {}),
  };
}

// ---- generic exposes ----

function planGeneric(device: DeviceContext, expose: Z2mExpose): Z2mEntityPlan | undefined {
  const property = expose.property;
  const name = expose.name ?? property;
  if (property === undefined || name === undefined || IGNORED_NAMES.has(name)) return undefined;
  // Settings (power-on behaviour, LED at night) are configuration, not the home's state.
  if (expose.category === 'config' || !has(expose, ACCESS_STATE)) return undefined;
  const label = withEndpoint(labelOf(expose), expose.endpoint);
  switch (expose.type) {
    case 'numeric':
      return has(expose, ACCESS_SET) && expose.category !== 'diagnostic'
        ? planNumber(device, expose, property, label)
        : planSensor(device, expose, property, label);
    case 'binary':
      if (has(expose, ACCESS_SET) && expose.category !== 'diagnostic') return planOnOff(device, expose);
      return planBinarySensor(device, expose, property, label, name);
    case 'enum':
    case 'text':
      return name === 'action' ? planAction(device, expose, property, label) : planTextSensor(device, expose, property, label);
    default:
      // composite (colour, schedules) and list values do not fit one entity state.
      return undefined;
  }
}

function planSensor(device: DeviceContext, expose: Z2mExpose, property: string, label: string): Z2mEntityPlan {
  const name = expose.name ?? property;
  const unit = expose.unit === undefined || expose.unit === 'lqi' ? null : expose.unit;
  let deviceClass = SENSOR_CLASSES[name] ?? null;
  if (deviceClass === 'illuminance' && unit !== 'lx') deviceClass = null;
  return {
    key: `sensor:${property}`,
    definition: { ...definition(device, 'sensor', property, label, []), unit, device_class: deviceClass, ...category(expose, name) },
    properties: [property],
    read: (message) => reading(numberState(message[property])),
  };
}

function planNumber(device: DeviceContext, expose: Z2mExpose, property: string, label: string): Z2mEntityPlan {
  const base = definition(device, 'number', property, label, ['set_value']);
  const limits: Record<string, unknown> = {};
  if (expose.value_min !== undefined) limits.min = expose.value_min;
  if (expose.value_max !== undefined) limits.max = expose.value_max;
  if (expose.value_step !== undefined) limits.step = expose.value_step;
  return {
    key: `number:${property}`,
    definition: { ...base, unit: expose.unit ?? null, attributes: { ...base.attributes, ...limits } },
    properties: [property],
    read: (message) => reading(numberState(message[property])),
    command(_service, data) {
      const value = data.value as number;
      const { value_min: min, value_max: max } = expose;
      if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
        throw new HomeAgentError(
          'HA_ERR_ENTITY_SERVICE',
          `${label}: value must be between ${min ?? '-∞'} and ${max ?? '∞'}, not ${value}`,
          {
            details: { field: 'data.value' },
          },
        );
      }
      return { [property]: value };
    },
  };
}

function planBinarySensor(device: DeviceContext, expose: Z2mExpose, property: string, label: string, name: string): Z2mEntityPlan {
  // Z2M declares contact with value_on false: "on" (open) is contact: false. Its definitions say so;
  // should one leave the values out, the meaning of contact is still that true is closed.
  const states = name === 'contact' && expose.value_on === undefined ? { ...expose, value_on: false, value_off: true } : expose;
  return {
    key: `binary_sensor:${property}`,
    definition: {
      ...definition(device, 'binary_sensor', property, label, []),
      device_class: BINARY_CLASSES[name] ?? null,
      ...category(expose, name),
    },
    properties: [property],
    read: (message) => reading(binaryState(states, message[property])),
  };
}

function planTextSensor(device: DeviceContext, expose: Z2mExpose, property: string, label: string): Z2mEntityPlan {
  const base = definition(device, 'sensor', property, label, []);
  const options = Array.isArray(expose.values) ? { options: [...expose.values] } : {};
  return {
    key: `sensor:${property}`,
    definition: { ...base, attributes: { ...base.attributes, ...options }, ...category(expose, expose.name ?? property) },
    properties: [property],
    read: (message) => reading(textState(message[property])),
  };
}

/**
 * A button's `action` is an event. The entity holds the last action; an empty action (Z2M 1.x
 * clears it right after, for Home Assistant) is not one. See {@link Z2mEntityPlan.event}.
 */
function planAction(device: DeviceContext, expose: Z2mExpose, property: string, label: string): Z2mEntityPlan {
  const plan = planTextSensor(device, expose, property, label);
  return {
    ...plan,
    key: `action:${property}`,
    event: true,
    read(message) {
      const value = message[property];
      return (typeof value === 'string' && value !== '') || typeof value === 'number' ? { state: value } : undefined;
    },
  };
}

// ---- helpers ----

/** `entity_category: 'diagnostic'` for an expose about the device (see the file comment), else nothing. */
function category(expose: Z2mExpose, name: string): { entity_category?: 'diagnostic' } {
  return expose.category === 'diagnostic' || DIAGNOSTIC_NAMES.has(name) ? { entity_category: 'diagnostic' } : {};
}

function definition(
  device: DeviceContext,
  domain: EntityDomain,
  suffix: string | undefined,
  label: string | undefined,
  services: string[],
): Omit<EntityDefinition, 'call' | 'initial_state'> {
  const name = label === undefined || label === '' ? device.name : `${device.name} ${label}`;
  return {
    domain,
    object_id: objectId(device.base, suffix),
    name: name.slice(0, MAX_NAME_CHARS),
    aliases: suffix === undefined ? device.aliases : [],
    area: device.area === null ? null : device.area.slice(0, MAX_NAME_CHARS),
    device: device.ieee,
    unit: null,
    device_class: null,
    attributes: { ...device.attributes },
    services,
  };
}

/** `<base>_<suffix>` within the registry's 64 characters, the suffix kept whole (it tells the entities apart). */
export function objectId(base: string, suffix?: string): string {
  const tail = suffix === undefined ? '' : slugify(suffix).slice(0, 40);
  if (tail === '') return base.slice(0, 64);
  const head = base.slice(0, 64 - tail.length - 1).replace(/_+$/, '');
  return `${head}_${tail}`;
}

function reading(state: EntityState | undefined, attributes: Record<string, unknown> = {}): Z2mReading | undefined {
  const hasAttributes = Object.keys(attributes).length > 0;
  if (state === undefined && !hasAttributes) return undefined;
  return { ...(state === undefined ? {} : { state }), ...(hasAttributes ? { attributes } : {}) };
}

/** on / off by the expose's value_on / value_off (ON / OFF, true / false, LOCK / UNLOCK ...); null stays unknown. */
function binaryState(expose: Z2mExpose, value: unknown): EntityState | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const on = expose.value_on === undefined ? [true, 'ON'] : [expose.value_on];
  const off = expose.value_off === undefined ? [false, 'OFF'] : [expose.value_off];
  if (on.includes(value)) return STATE_ON;
  if (off.includes(value)) return STATE_OFF;
  return undefined;
}

function numberState(value: unknown): EntityState | undefined {
  if (value === null) return null;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function textState(value: unknown): EntityState | undefined {
  if (value === null) return null;
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : undefined;
}

function onOffCommand(state: Z2mExpose, service: string, current: EntityState): unknown {
  if (service === 'turn_on') return state.value_on ?? 'ON';
  if (service === 'turn_off') return state.value_off ?? 'OFF';
  // toggle: Z2M's own TOGGLE when the device has one (it knows the real state), else from ours.
  if (state.value_toggle !== undefined) return state.value_toggle;
  return current === STATE_ON ? (state.value_off ?? 'OFF') : (state.value_on ?? 'ON');
}

function has(expose: Z2mExpose, bit: number): boolean {
  // An access-less feature (some old definitions) is taken as published only.
  return ((expose.access ?? ACCESS_STATE) & bit) !== 0;
}

/** `state`, or `state_<endpoint>` on an endpoint: the device's own on/off rather than a setting beside it. */
function isPlainState(state: Z2mExpose): boolean {
  return state.property === 'state' || (state.endpoint !== undefined && state.property === `state_${state.endpoint}`);
}

function features(expose: Z2mExpose): Z2mExpose[] {
  return (expose.features ?? []).map(readExpose).filter((f): f is Z2mExpose => f !== undefined);
}

function feature(expose: Z2mExpose, name: string, type: string): Z2mExpose | undefined {
  return features(expose).find((f) => f.name === name && f.type === type);
}

function readExpose(value: unknown): Z2mExpose | undefined {
  if (!isRecord(value) || typeof value.type !== 'string') return undefined;
  return value as unknown as Z2mExpose;
}

function labelOf(expose: Z2mExpose): string {
  if (typeof expose.label === 'string' && expose.label.trim() !== '') return expose.label.trim();
  const name = humanize(expose.name ?? expose.property ?? '');
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/**
 * The label of an on/off beside the device's own (`away_mode`): the specific expose's label when it
 * has one (`Auto lock`), else its property (its feature is only called "state").
 */
function sideLabel(expose: Z2mExpose, state: Z2mExpose): string {
  if (typeof expose.label === 'string' && expose.label.trim() !== '') return withEndpoint(expose.label.trim(), state.endpoint);
  const property = state.property ?? '';
  const suffix = state.endpoint === undefined ? '' : `_${state.endpoint}`;
  const name = suffix !== '' && property.endsWith(suffix) ? property.slice(0, -suffix.length) : property;
  return withEndpoint(labelOf({ type: state.type, name }), state.endpoint);
}

function withEndpoint(label: string, endpoint: string | undefined): string {
  return endpoint === undefined ? label : `${label} ${endpoint}`;
}

function humanize(text: string): string {
  return text.replace(/_/g, ' ').replace(/\s+/g, ' ').trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
