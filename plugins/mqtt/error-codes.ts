/**
 * The error codes the mqtt plugin (its connection, embedded broker and Zigbee2MQTT management) throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_MQTT_UNAVAILABLE: 'MQTT is not configured or the broker cannot be reached',
  HA_ERR_MQTT_PAYLOAD: 'the MQTT payload is too large or cannot be read',
  HA_ERR_MQTT_TOPIC: 'the MQTT topic is invalid or not allowed',
  HA_ERR_MQTT_BROKER: 'the embedded MQTT broker could not start',
  HA_ERR_ZIGBEE_UNAVAILABLE:
    'Zigbee2MQTT cannot be managed now (plugin.mqtt.zigbee2mqtt off, the broker not connected, or the bridge offline)',
  HA_ERR_ZIGBEE_TIMEOUT: 'Zigbee2MQTT did not answer a bridge request within its time limit',
  HA_ERR_ZIGBEE_REQUEST: 'Zigbee2MQTT answered a bridge request with an error (its wording says why)',
} as const;
