/**
 * Home Assistant MQTT discovery configs for HomeAgent's entities and the agent, as pure functions
 * (ha-discovery.ts publishes them, remote-nodes.ts reads them back from other HomeAgent nodes).
 * Keys are Home Assistant's full names (no abbreviations) so that a person reading the broker
 * understands them; the documented keys per component are checked by the unit tests.
 *
 * Decisions (docs/mqtt.md, "Home Assistant discovery"):
 * - Topic `<prefix>/<component>/<node_id>/<domain>_<object_id>/config`: the entity id with the dot
 *   made `_`, so `button.x` published as a binary_sensor and `binary_sensor.x` cannot collide.
 * - Commands go to `<base>/<entity_id>/set` in forms the command topic documents: ON / OFF for
 *   on/off domains, a service name (`lock`, `open`, `press`) for the others, and
 *   `{"service", "data"}` JSON (via a command template) for values such as brightness.
 * - Availability: `<base>/status` (the node, with its last will) AND `<base>/<entity_id>/availability`
 *   (`offline` while the entity's state is `unavailable`), mode `all`. A separate retained topic is
 *   used rather than a template over the state topic, because an unknown state is published as an
 *   empty retained payload, which clears the retained message: a template over the state topic
 *   would then never report and the entity would stay unavailable in Home Assistant.
 * - Devices: one Home Assistant device per node (`homeagent_<node_id>`) and one per area of the
 *   node (`homeagent_<node_id>_area_<area>`, via the node device). Home Assistant applies
 *   `suggested_area` only when it creates a device, so one device for every entity would put all
 *   of them in the first entity's area; a device per area puts each in its own, and the area makes
 *   the round trip to remote nodes.
 * - The agent's last reply: Home Assistant caps a state at 255 characters, so the sensor's state is
 *   the first 255 characters (value_template) and the whole text is its `text` attribute (the same
 *   topic as json_attributes_topic); the topic itself keeps the whole reply as plain text.
 */
import { ENTITY_DOMAINS, type EntityDomain, type EntityInfo, type EntityState, STATE_UNAVAILABLE } from '../../src/sdk/index.js';
import { topicLayout } from './topics.js';

/** The device manufacturer every HomeAgent node announces; remote-nodes.ts keys on it. */
export const HOMEAGENT_MANUFACTURER = 'HomeAgent';
export const PAYLOAD_AVAILABLE = 'online';
export const PAYLOAD_NOT_AVAILABLE = 'offline';
/** Home Assistant's longest state. */
export const HA_STATE_MAX_CHARS = 255;

/**
 * The entity domains published, each as the Home Assistant component of the same name. The others
 * are left out on purpose: Home Assistant's MQTT components for them (climate, vacuum, scene) need
 * a topic and payload per mode, fan speed or feature, which HomeAgent's one command topic with
 * `{"service", "data"}` does not describe, and media_player, person and weather have no MQTT
 * component at all. A config that only half describes them would be refused by Home Assistant or
 * show controls that do nothing. Cameras are not published either: their pictures stay in the
 * home's media store.
 */
export const PUBLISHED_DOMAINS = [
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
] as const satisfies readonly EntityDomain[];
export type PublishedDomain = (typeof PUBLISHED_DOMAINS)[number];

/** The components HomeAgent publishes: its published domains, and notify for the agent. */
export const HA_COMPONENTS = [...PUBLISHED_DOMAINS, 'notify'] as const;
export type HaComponent = (typeof HA_COMPONENTS)[number];

/** Components that only report a state: Home Assistant allows them `entity_category: diagnostic`, never `config`. */
const REPORT_ONLY_COMPONENTS: readonly HaComponent[] = ['sensor', 'binary_sensor'];

/** Whether entities of this domain appear in Home Assistant (see {@link PUBLISHED_DOMAINS}). */
export function isPublishedDomain(domain: string): domain is PublishedDomain {
  return (PUBLISHED_DOMAINS as readonly string[]).includes(domain);
}

/**
 * Device classes Home Assistant documents per component; another class is left out of the config
 * (Home Assistant would refuse the whole config for it).
 */
export const HA_DEVICE_CLASSES: Readonly<Partial<Record<HaComponent, readonly string[]>>> = {
  switch: ['outlet', 'switch'],
  button: ['identify', 'restart', 'update'],
  cover: ['awning', 'blind', 'curtain', 'damper', 'door', 'garage', 'gate', 'shade', 'shutter', 'window'],
  valve: ['water', 'gas'],
  binary_sensor: [
    'battery',
    'battery_charging',
    'carbon_monoxide',
    'cold',
    'connectivity',
    'door',
    'garage_door',
    'gas',
    'heat',
    'light',
    'lock',
    'moisture',
    'motion',
    'moving',
    'occupancy',
    'opening',
    'plug',
    'power',
    'presence',
    'problem',
    'running',
    'safety',
    'smoke',
    'sound',
    'tamper',
    'update',
    'vibration',
    'window',
  ],
  // Not `enum`: Home Assistant then requires the list of options, which an entity does not declare.
  sensor: [...numericSensorClasses(), 'date', 'timestamp'],
  number: numericSensorClasses(),
};

/** The sensor device classes whose state is a number (number.mqtt documents the same list). */
function numericSensorClasses(): string[] {
  return [
    'apparent_power',
    'aqi',
    'area',
    'atmospheric_pressure',
    'battery',
    'blood_glucose_concentration',
    'carbon_dioxide',
    'carbon_monoxide',
    'current',
    'data_rate',
    'data_size',
    'distance',
    'duration',
    'energy',
    'energy_storage',
    'frequency',
    'gas',
    'humidity',
    'illuminance',
    'irradiance',
    'moisture',
    'monetary',
    'nitrogen_dioxide',
    'nitrogen_monoxide',
    'nitrous_oxide',
    'ozone',
    'ph',
    'pm1',
    'pm25',
    'pm10',
    'power_factor',
    'power',
    'precipitation',
    'precipitation_intensity',
    'pressure',
    'reactive_power',
    'signal_strength',
    'sound_pressure',
    'speed',
    'sulphur_dioxide',
    'temperature',
    'volatile_organic_compounds',
    'volatile_organic_compounds_parts',
    'voltage',
    'volume',
    'volume_flow_rate',
    'volume_storage',
    'water',
    'weight',
    'wind_speed',
  ];
}

/** This HomeAgent as Home Assistant sees it. */
export interface DiscoveryNode {
  /** plugin.mqtt.node_id, resolved (never empty). */
  node_id: string;
  /** core.name: the name of the node's device. */
  name: string;
  base_topic: string;
  discovery_prefix: string;
  /** HomeAgent's version, shown as the device's firmware and in the origin block. */
  sw_version?: string;
}

export interface DiscoveryMessage {
  /** `<prefix>/<component>/<node_id>/<object_id>/config` */
  topic: string;
  component: HaComponent;
  unique_id: string;
  /** The HomeAgent entity it describes; absent for the agent's own entities. */
  entity_id?: string;
  payload: Record<string, unknown>;
}

/** Where an entity says whether it answers: `online`, or `offline` while its state is `unavailable`. */
export function entityAvailabilityTopic(baseTopic: string, entityId: string): string {
  return topicLayout(baseTopic).availability(entityId);
}

export function availabilityOf(state: EntityState): typeof PAYLOAD_AVAILABLE | typeof PAYLOAD_NOT_AVAILABLE {
  return state === STATE_UNAVAILABLE ? PAYLOAD_NOT_AVAILABLE : PAYLOAD_AVAILABLE;
}

/** The state as published on `<base>/<entity_id>/state`: its text, "" for unknown. */
export function stateText(state: EntityState): string {
  return state === null ? '' : String(state);
}

/** Stable across renames and restarts: Home Assistant keys its entity registry on it. */
export function uniqueIdFor(nodeId: string, entityId: string): string {
  return `homeagent_${nodeId}_${entityId.replace('.', '_')}`;
}

export function discoveryTopic(prefix: string, component: HaComponent, nodeId: string, objectId: string): string {
  return `${prefix.replace(/\/+$/, '')}/${component}/${nodeId}/${objectId}/config`;
}

/** The parts of a discovery topic with a node level, or undefined for any other topic. */
export function parseDiscoveryTopic(prefix: string, topic: string): { component: string; node_id: string; object_id: string } | undefined {
  const root = `${prefix.replace(/\/+$/, '')}/`;
  if (!topic.startsWith(root)) return undefined;
  const parts = topic.slice(root.length).split('/');
  if (parts.length !== 4 || parts[3] !== 'config') return undefined;
  const [component, node_id, object_id] = parts as [string, string, string];
  if (component === '' || node_id === '' || object_id === '') return undefined;
  return { component, node_id, object_id };
}

/** Longest first, so `binary_sensor_x` is not read as a `binary` domain (nor `media_player_x` as a shorter one). */
const DOMAINS_BY_LENGTH = [...ENTITY_DOMAINS].sort((a, b) => b.length - a.length);

/** The HomeAgent entity a topic object id (`switch_door_relay`) names, or undefined (the agent's own). */
export function entityOfTopicObjectId(objectId: string): { domain: EntityDomain; object_id: string } | undefined {
  for (const domain of DOMAINS_BY_LENGTH) {
    if (objectId.startsWith(`${domain}_`) && objectId.length > domain.length + 1) {
      return { domain, object_id: objectId.slice(domain.length + 1) };
    }
  }
  return undefined;
}

/**
 * The Home Assistant component an entity appears as, or undefined when its domain is not published.
 * Entities that take no command appear as what they are to Home Assistant, a sensor: a switch that
 * only reports (or a push button wired to the Pi) as a binary_sensor, a number without set_value as
 * a sensor.
 */
export function haComponentFor(entity: Pick<EntityInfo, 'domain' | 'services'>): HaComponent | undefined {
  const { domain, services } = entity;
  if (!isPublishedDomain(domain)) return undefined;
  switch (domain) {
    case 'switch':
    case 'light':
    case 'fan':
    case 'siren':
      return services.length > 0 ? domain : 'binary_sensor';
    case 'lock':
      return services.includes('lock') || services.includes('unlock') ? 'lock' : 'binary_sensor';
    case 'button':
      return services.includes('press') ? 'button' : 'binary_sensor';
    case 'number':
      return services.includes('set_value') ? 'number' : 'sensor';
    default:
      return domain;
  }
}

/**
 * The discovery config of one entity, or undefined when its domain is not published. `areaName` is
 * the display name of `entity.area` (its id when absent).
 */
export function entityDiscovery(entity: EntityInfo, node: DiscoveryNode, areaName?: string): DiscoveryMessage | undefined {
  const component = haComponentFor(entity);
  if (component === undefined) return undefined;
  const topics = topicLayout(node.base_topic);
  const objectId = entity.entity_id.replace('.', '_');
  const uniqueId = uniqueIdFor(node.node_id, entity.entity_id);
  const stateTopic = topics.state(entity.entity_id);
  const commandTopic = topics.command(entity.entity_id);
  const attributesTopic = topics.attributes(entity.entity_id);
  const payload: Record<string, unknown> = {
    name: entity.name,
    unique_id: uniqueId,
    default_entity_id: `${component}.${node.node_id}_${entity.entity_id.split('.')[1]}`,
    device: deviceBlock(node, entity.area, areaName),
    origin: originBlock(node),
    availability: [
      { topic: topics.status, payload_available: PAYLOAD_AVAILABLE, payload_not_available: PAYLOAD_NOT_AVAILABLE },
      {
        topic: entityAvailabilityTopic(node.base_topic, entity.entity_id),
        payload_available: PAYLOAD_AVAILABLE,
        payload_not_available: PAYLOAD_NOT_AVAILABLE,
      },
    ],
    availability_mode: 'all',
    qos: 1,
    json_attributes_topic: attributesTopic,
  };
  const commands = { command_topic: commandTopic, retain: false };
  const numberAttribute = (key: string) => typeof entity.attributes[key] === 'number' && Number.isFinite(entity.attributes[key]);

  switch (component) {
    case 'switch':
    case 'siren': {
      // A momentary relay offering only toggle gets toggle for both; its state still reads on/off.
      const toggleOnly = !entity.services.includes('turn_on') && !entity.services.includes('turn_off');
      Object.assign(payload, commands, {
        state_topic: stateTopic,
        payload_on: toggleOnly ? 'toggle' : 'ON',
        payload_off: toggleOnly ? 'toggle' : 'OFF',
        state_on: 'on',
        state_off: 'off',
      });
      // Without a command template a siren sends JSON ({"state": "ON", ...}), which the command topic does not take.
      if (component === 'siren')
        Object.assign(payload, { command_template: '{{ value }}', support_duration: false, support_volume_set: false });
      break;
    }
    case 'light':
      // Light and fan have no state_on/state_off: the state (`on`) is upper-cased to match ON/OFF.
      Object.assign(payload, commands, {
        state_topic: stateTopic,
        payload_on: 'ON',
        payload_off: 'OFF',
        state_value_template: '{{ value | upper }}',
      });
      if (numberAttribute('brightness')) {
        Object.assign(payload, {
          brightness_command_topic: commandTopic,
          brightness_command_template: '{"service": "turn_on", "data": {"brightness": {{ value }}}}',
          brightness_state_topic: attributesTopic,
          brightness_value_template: '{{ value_json.brightness }}',
          brightness_scale: 255,
          // One turn_on with the brightness instead of a brightness command followed by a plain ON.
          on_command_type: 'brightness',
        });
      }
      break;
    case 'fan':
      Object.assign(payload, commands, {
        state_topic: stateTopic,
        payload_on: 'ON',
        payload_off: 'OFF',
        state_value_template: '{{ value | upper }}',
      });
      if (entity.services.includes('set_percentage')) {
        Object.assign(payload, {
          percentage_command_topic: commandTopic,
          percentage_command_template: '{"service": "set_percentage", "data": {"percentage": {{ value }}}}',
        });
      }
      if (numberAttribute('percentage')) {
        Object.assign(payload, { percentage_state_topic: attributesTopic, percentage_value_template: '{{ value_json.percentage }}' });
      }
      break;
    case 'lock':
      Object.assign(payload, commands, {
        state_topic: stateTopic,
        payload_lock: 'lock',
        payload_unlock: 'unlock',
        state_locked: 'locked',
        state_unlocked: 'unlocked',
        state_locking: 'locking',
        state_unlocking: 'unlocking',
        state_jammed: 'jammed',
      });
      break;
    case 'cover':
      if (entity.services.length > 0)
        Object.assign(payload, commands, { payload_open: 'open', payload_close: 'close', payload_stop: 'stop' });
      Object.assign(payload, {
        state_topic: stateTopic,
        state_open: 'open',
        state_opening: 'opening',
        state_closed: 'closed',
        state_closing: 'closing',
        state_stopped: 'stopped',
      });
      if (entity.services.includes('set_position')) {
        Object.assign(payload, {
          set_position_topic: commandTopic,
          set_position_template: '{"service": "set_position", "data": {"position": {{ position }}}}',
        });
      }
      if (numberAttribute('position'))
        Object.assign(payload, { position_topic: attributesTopic, position_template: '{{ value_json.position }}' });
      break;
    case 'valve':
      if (entity.services.length > 0) Object.assign(payload, commands, { payload_open: 'open', payload_close: 'close' });
      Object.assign(payload, {
        state_topic: stateTopic,
        reports_position: false,
        state_open: 'open',
        state_opening: 'opening',
        state_closed: 'closed',
        state_closing: 'closing',
      });
      break;
    case 'button':
      Object.assign(payload, commands, { payload_press: 'press' });
      break;
    case 'number':
      Object.assign(payload, commands, {
        state_topic: stateTopic,
        command_template: '{"service": "set_value", "data": {"value": {{ value }}}}',
      });
      for (const key of ['min', 'max', 'step'] as const) if (numberAttribute(key)) payload[key] = entity.attributes[key];
      if (entity.unit !== null) payload.unit_of_measurement = entity.unit;
      break;
    case 'binary_sensor':
      // A lock that only reports: Home Assistant's lock class reads on as unlocked.
      Object.assign(
        payload,
        entity.domain === 'lock'
          ? { state_topic: stateTopic, payload_on: 'unlocked', payload_off: 'locked', device_class: 'lock' }
          : { state_topic: stateTopic, payload_on: 'on', payload_off: 'off' },
      );
      break;
    case 'sensor': {
      payload.state_topic = stateTopic;
      if (entity.unit !== null) payload.unit_of_measurement = entity.unit;
      // The entity's own class (a meter is total_increasing); a number shown as a sensor has none, and measures.
      const stateClass = entity.domain === 'sensor' ? entity.state_class : entity.unit === null ? null : 'measurement';
      if (stateClass !== null) payload.state_class = stateClass;
      break;
    }
    case 'notify':
      break;
  }
  const deviceClass = entity.device_class;
  if (payload.device_class === undefined && deviceClass !== null && HA_DEVICE_CLASSES[component]?.includes(deviceClass)) {
    payload.device_class = deviceClass;
  }
  // Home Assistant refuses `config` on a component that only reports: such an entity goes out as a primary one.
  const category = entity.entity_category;
  if (category === 'diagnostic' || (category === 'config' && !REPORT_ONLY_COMPONENTS.includes(component))) {
    payload.entity_category = category;
  }
  return {
    topic: discoveryTopic(node.discovery_prefix, component, node.node_id, objectId),
    component,
    unique_id: uniqueId,
    entity_id: entity.entity_id,
    payload,
  };
}

/** The agent itself: a notify entity (a text for the agent) and a sensor with its last reply. */
export function agentDiscovery(node: DiscoveryNode): DiscoveryMessage[] {
  const topics = topicLayout(node.base_topic);
  const common = {
    device: deviceBlock(node, null),
    origin: originBlock(node),
    availability: [{ topic: topics.status, payload_available: PAYLOAD_AVAILABLE, payload_not_available: PAYLOAD_NOT_AVAILABLE }],
    qos: 1,
  };
  const notifyId = `homeagent_${node.node_id}_agent_notify`;
  const replyId = `homeagent_${node.node_id}_agent_last_reply`;
  return [
    {
      topic: discoveryTopic(node.discovery_prefix, 'notify', node.node_id, 'agent_notify'),
      component: 'notify',
      unique_id: notifyId,
      payload: {
        name: 'Agent',
        unique_id: notifyId,
        default_entity_id: `notify.${node.node_id}_agent`,
        command_topic: topics.agentNotify,
        retain: false,
        ...common,
      },
    },
    {
      topic: discoveryTopic(node.discovery_prefix, 'sensor', node.node_id, 'agent_last_reply'),
      component: 'sensor',
      unique_id: replyId,
      payload: {
        name: 'Agent last reply',
        unique_id: replyId,
        default_entity_id: `sensor.${node.node_id}_agent_last_reply`,
        state_topic: topics.agentLastReply,
        value_template: `{{ value[:${HA_STATE_MAX_CHARS}] }}`,
        json_attributes_topic: topics.agentLastReply,
        json_attributes_template: "{{ {'text': value} | tojson }}",
        ...common,
      },
    },
  ];
}

function nodeDeviceId(node: DiscoveryNode): string {
  return `homeagent_${node.node_id}`;
}

function deviceBlock(node: DiscoveryNode, area: string | null, areaName?: string): Record<string, unknown> {
  const device: Record<string, unknown> = {
    identifiers: [nodeDeviceId(node)],
    name: node.name,
    manufacturer: HOMEAGENT_MANUFACTURER,
    model: 'HomeAgent',
  };
  if (node.sw_version !== undefined) device.sw_version = node.sw_version;
  if (area === null) return device;
  const shown = areaName ?? area;
  return {
    ...device,
    identifiers: [`${nodeDeviceId(node)}_area_${area}`],
    name: `${node.name} ${shown}`,
    suggested_area: shown,
    via_device: nodeDeviceId(node),
  };
}

function originBlock(node: DiscoveryNode): Record<string, unknown> {
  return node.sw_version === undefined ? { name: HOMEAGENT_MANUFACTURER } : { name: HOMEAGENT_MANUFACTURER, sw_version: node.sw_version };
}
