/**
 * The contract between the MQTT connection (mqtt-connection.ts, the only code that touches
 * mqtt.js's client) and the features built on it: inbound mapping, the output channel and
 * mqtt_publish, Home Assistant discovery, Zigbee2MQTT and remote nodes. Features see one
 * {@link MqttLink}; tests can give them a link over any real broker.
 */
import type { MqttCounters, Qos } from '../../src/sdk/api.js';

export type { MqttCounters, Qos };

/** An inbound message as features get it. */
export interface MqttMessage {
  topic: string;
  payload: Buffer;
  qos: Qos;
  retain: boolean;
}

export interface PublishOptions {
  /** Default plugin.mqtt.publish_qos. */
  qos?: Qos;
  retain?: boolean;
}

export type MessageHandler = (message: MqttMessage) => void;

/** What a feature may do with the broker connection. */
export interface MqttLink {
  /** True while connected to the broker. */
  readonly connected: boolean;
  /**
   * Publishes. QoS 1/2 messages are kept (on disk) until the broker acknowledged them, across
   * disconnects and restarts: the promise resolves once the message is stored or sent, not when
   * acknowledged. QoS 0 while disconnected is dropped (resolves, counted). A payload over
   * plugin.mqtt.max_payload_bytes rejects with HA_ERR_MQTT_PAYLOAD.
   */
  publish(topic: string, payload: string | Buffer, options?: PublishOptions): Promise<void>;
  /**
   * Follows a topic filter (+ and # wildcards). The subscription is renewed after every reconnect
   * and kept in the broker's session. Several handlers may share a filter. Returns a function that
   * removes this handler (and unsubscribes when it was the last one).
   */
  subscribe(filter: string, qos: Qos, handler: MessageHandler): () => void;
  /** Called after each (re)connection, once subscriptions are renewed. Returns an unsubscribe function. */
  onConnect(listener: (info: { session_present: boolean }) => void): () => void;
}

/** Counters at zero: the plugin starts with them, and tests hand them to a feature under test. */
export function emptyCounters(): MqttCounters {
  return { received: 0, published: 0, duplicates: 0, malformed: 0, oversized: 0, rate_limited: 0, dropped: 0, reconnects: 0 };
}
