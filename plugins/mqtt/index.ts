/**
 * The MQTT plugin's entry: HomeAgent on the house's MQTT broker (or its own embedded one). See
 * mqtt-plugin.ts for the start order and the feature modules, mqtt-connection.ts for delivery.
 */
import { definePlugin } from '../../src/sdk/index.js';
import { createMqttPlugin } from './mqtt-plugin.js';
import type { MqttSettings } from './settings-schema.js';

export { createMqttPlugin, MQTT_FEATURES, MqttPlugin } from './mqtt-plugin.js';

export default definePlugin<MqttSettings>(createMqttPlugin());
