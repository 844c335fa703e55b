/**
 * From plugin.mqtt.* settings to mqtt.js client options, and the checks that belong to
 * configuration rather than to the network: the URL's scheme, TLS files that exist and can be read.
 * Those fail the start with a message naming the setting; a broker that cannot be reached does not
 * (the connection keeps retrying).
 *
 * Fixed choices, each because of a promise the connection makes:
 * - clean: false and a fixed client id: the broker keeps our subscriptions and queues QoS 1/2
 *   messages while we are away;
 * - reconnectPeriod: 0: mqtt.js retries at a fixed period; our own loop backs off (backoff.ts);
 * - queueQoSZero: false: a QoS 0 publish while disconnected is dropped and counted, not kept in an
 *   unbounded memory queue; resubscribe: false: our subscription table is renewed by us;
 * - protocolVersion 4 (MQTT 3.1.1): what every broker in a house speaks, Zigbee2MQTT included;
 * - will: <base>/status "offline", retained, QoS 1, so others see us vanish.
 */
import { readFileSync } from 'node:fs';
import type { IClientOptions } from 'mqtt';
import { HomeAgentError } from '../../src/sdk/index.js';
import type { MqttSettings } from './settings-schema.js';

/** What the connection reads from plugin.mqtt.* (client_id already resolved: never empty). */
export type ConnectionSettings = Pick<
  MqttSettings,
  | 'url'
  | 'username'
  | 'password'
  | 'client_id'
  | 'ca_file'
  | 'cert_file'
  | 'key_file'
  | 'reject_unauthorized'
  | 'base_topic'
  | 'keepalive_s'
  | 'reconnect_min_ms'
  | 'reconnect_max_ms'
  | 'connect_timeout_ms'
  | 'publish_qos'
  | 'max_payload_bytes'
  | 'outbox_max_messages'
>;

const SCHEMES = new Set(['mqtt:', 'mqtts:', 'ws:', 'wss:']);
const TLS_SCHEMES = new Set(['mqtts:', 'wss:']);

/** The broker URL, checked; HA_ERR_MQTT_UNAVAILABLE naming plugin.mqtt.url otherwise. */
export function checkBrokerUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new HomeAgentError(
      'HA_ERR_MQTT_UNAVAILABLE',
      `plugin.mqtt.url ${JSON.stringify(redactUrl(url))} is not a URL; use mqtt://host:1883`,
    );
  }
  if (!SCHEMES.has(parsed.protocol)) {
    throw new HomeAgentError(
      'HA_ERR_MQTT_UNAVAILABLE',
      `plugin.mqtt.url must start with mqtt://, mqtts://, ws:// or wss://, not ${parsed.protocol}//`,
    );
  }
  if (parsed.hostname === '') throw new HomeAgentError('HA_ERR_MQTT_UNAVAILABLE', 'plugin.mqtt.url names no host');
  return parsed;
}

/** The URL without a password (for status and logs). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  }
}

export function usesTls(url: URL): boolean {
  return TLS_SCHEMES.has(url.protocol);
}

export interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** Reads the TLS files named by the settings (at start, so a missing file is said at once). */
export function readTlsFiles(settings: Pick<ConnectionSettings, 'ca_file' | 'cert_file' | 'key_file'>): TlsMaterial {
  if ((settings.cert_file === '') !== (settings.key_file === '')) {
    throw new HomeAgentError(
      'HA_ERR_MQTT_UNAVAILABLE',
      'plugin.mqtt.cert_file and plugin.mqtt.key_file go together: a client certificate needs its key',
    );
  }
  const material: TlsMaterial = {};
  const read = (key: 'ca_file' | 'cert_file' | 'key_file'): Buffer | undefined => {
    const file = settings[key];
    if (file === '') return undefined;
    try {
      return readFileSync(file);
    } catch (error) {
      throw new HomeAgentError('HA_ERR_MQTT_UNAVAILABLE', `plugin.mqtt.${key} ${file} cannot be read: ${(error as Error).message}`, {
        cause: error,
      });
    }
  };
  const ca = read('ca_file');
  const cert = read('cert_file');
  const key = read('key_file');
  if (ca !== undefined) material.ca = ca;
  if (cert !== undefined) material.cert = cert;
  if (key !== undefined) material.key = key;
  return material;
}

export interface ClientParts {
  willTopic: string;
  outgoingStore: NonNullable<IClientOptions['outgoingStore']>;
  messageIdProvider: NonNullable<IClientOptions['messageIdProvider']>;
  tls: TlsMaterial;
}

/** mqtt.js options for one client; the client is connected by the caller (manualConnect). */
export function clientOptions(settings: ConnectionSettings, parts: ClientParts): IClientOptions {
  const options: IClientOptions = {
    clientId: settings.client_id,
    protocolVersion: 4,
    clean: false,
    reconnectPeriod: 0,
    manualConnect: true,
    connectTimeout: settings.connect_timeout_ms,
    keepalive: settings.keepalive_s,
    queueQoSZero: false,
    resubscribe: false,
    will: { topic: parts.willTopic, payload: Buffer.from('offline'), qos: 1, retain: true },
    outgoingStore: parts.outgoingStore,
    messageIdProvider: parts.messageIdProvider,
    rejectUnauthorized: settings.reject_unauthorized,
  };
  if (settings.username !== '') options.username = settings.username;
  if (settings.password !== '') options.password = settings.password;
  if (parts.tls.ca !== undefined) options.ca = parts.tls.ca;
  if (parts.tls.cert !== undefined) options.cert = parts.tls.cert;
  if (parts.tls.key !== undefined) options.key = parts.tls.key;
  return options;
}

/**
 * A connection error in words a house owner can act on, with the setting to look at. mqtt.js's
 * own messages stay in the text (they name the exact cause).
 */
export function describeConnectionError(error: Error & { code?: string | number }): string {
  const message = error.message;
  const code = error.code;
  if (code === 4 || code === 134 || /Bad username or password/i.test(message)) {
    return `the broker refused the login: bad user name or password (plugin.mqtt.username, plugin.mqtt.password) [${message}]`;
  }
  if (code === 5 || code === 135 || /Not authorized/i.test(message)) {
    return `the broker refused the login: not authorized (plugin.mqtt.username, plugin.mqtt.password, or a client certificate) [${message}]`;
  }
  if (code === 2 || code === 133) return `the broker refused the client id (plugin.mqtt.client_id) [${message}]`;
  if (typeof code === 'string') {
    if (code === 'ECONNREFUSED') return `nothing accepts connections at the broker's address (is the broker running?) [${message}]`;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the broker's host name cannot be resolved (plugin.mqtt.url) [${message}]`;
    // An alert is the broker refusing our side of the handshake: our certificate, or none.
    if (/ALERT_CERTIFICATE_REQUIRED/i.test(code)) {
      return `TLS: the broker requires a client certificate (plugin.mqtt.cert_file, plugin.mqtt.key_file) [${message}]`;
    }
    if (/ALERT/i.test(code))
      return `TLS: the broker refused our client certificate (plugin.mqtt.cert_file, plugin.mqtt.key_file) [${message}]`;
    if (/CERT|SELF_SIGNED|UNABLE_TO_|ERR_TLS|ERR_SSL/i.test(code)) {
      return `TLS: the broker's certificate is not trusted or does not match (plugin.mqtt.ca_file, plugin.mqtt.reject_unauthorized) [${message}]`;
    }
  }
  if (/connack timeout/i.test(message))
    return `the broker did not answer the connection in time (plugin.mqtt.connect_timeout_ms) [${message}]`;
  return message;
}
